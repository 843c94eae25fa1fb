package gradnoise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMeterRecoversTheNoiseScale: gradients drawn as G plus
// independent noise of variance σ²/b per coordinate (b samples averaged,
// per-sample covariance σ²·I) have B_noise = n·σ²/|G|²; the meter's
// estimate over 200 applies of k = 4 such gradients is within 5% of it,
// in gradients (B_noise/b), and an apply of one gradient leaves it as it
// was.
func TestMeterRecoversTheNoiseScale(t *testing.T) {
	const n, b, k, sigma = 2000, 32.0, 4, 3.0
	r := rand.New(rand.NewPCG(1, 2))
	G := make([]float32, n)
	var g2 float64
	for i := range G {
		G[i] = float32(r.NormFloat64() * 0.1)
		g2 += float64(G[i]) * float64(G[i])
	}
	want := n * sigma * sigma / g2 / b
	m := New(b)
	gs := make([][]float32, k)
	for range 200 {
		for j := range gs {
			gs[j] = make([]float32, n)
			for i := range gs[j] {
				gs[j][i] = G[i] + float32(r.NormFloat64()*sigma/math.Sqrt(b))
			}
		}
		m.Add(gs)
	}
	got := m.Read()
	if math.Abs(got/want-1) > 0.05 {
		t.Fatalf("noise scale %.3f gradients, want %.3f (n·σ²/|G|²/b)", got, want)
	}
	m.Add(gs[:1])
	if again := m.Read(); again != got {
		t.Fatalf("after an apply of one gradient: %.3f, want the last estimate %.3f", again, got)
	}
}
