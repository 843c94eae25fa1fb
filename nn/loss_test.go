package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Loss by hand: all-zero weights give every class the same logit, so every
// sample's cross-entropy is ln 10 whatever its pixels and label. With
// trained-like (random) weights it is the size-weighted mean of Grad's
// batch means whatever the batch, and one batch of all rows is Grad's own.
func TestLossByHand(t *testing.T) {
	m, err := New("mlp", Image28)
	if err != nil {
		t.Fatal(err)
	}
	n := 7
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*m.InputSize())
	for i := range x {
		x[i] = r.Float32()
	}
	y := []uint8{0, 3, 9, 1, 1, 5, 2}
	w := make([]float32, m.NumParams())
	if l := Loss(m, w, nil, x, y, 3); math.Abs(l-math.Log(10)) > 1e-6 {
		t.Errorf("zero weights: loss %v, want ln 10 = %v", l, math.Log(10))
	}
	m.Init(w, 4)
	g := make([]float32, m.NumParams())
	whole := float64(m.Grad(w, g, x, y, n))
	for _, b := range []int{1, 3, 7, 100} {
		if l := Loss(m, w, g, x, y, b); math.Abs(l-whole) > 1e-5 {
			t.Errorf("batch %d: loss %v, want Grad's %v over all rows", b, l, whole)
		}
	}
	// Batches of 3: rows 0-2, 3-5, 6, weighted 3:3:1.
	want := (3*float64(m.Grad(w, g, x[:3*784], y[:3], 3)) + 3*float64(m.Grad(w, g, x[3*784:6*784], y[3:6], 3)) +
		float64(m.Grad(w, g, x[6*784:], y[6:], 1))) / 7
	if l := Loss(m, w, g, x, y, 3); l != want {
		t.Errorf("batches of 3: loss %v, want %v", l, want)
	}
	if l := Loss(m, w, g, nil, nil, 3); l != 0 {
		t.Errorf("no samples: loss %v", l)
	}
}
