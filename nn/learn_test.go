package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// synthetic draws n 28×28 images in [0,1] from 10 classes: each class is a
// fixed random blob pattern, each sample that pattern plus heavy pixel noise
// and a random brightness, so no single pixel decides the class.
type synthetic struct {
	protos [10][784]float32
	r      *rand.Rand
}

func newSynthetic(seed uint64) *synthetic {
	s := &synthetic{r: rand.New(rand.NewPCG(seed, 99))}
	for c := range s.protos {
		for b := 0; b < 4; b++ { // four 7×7 bright blobs per class
			y0, x0 := s.r.IntN(22), s.r.IntN(22)
			for y := y0; y < y0+7; y++ {
				for x := x0; x < x0+7; x++ {
					s.protos[c][y*28+x] = 1
				}
			}
		}
	}
	return s
}

func (s *synthetic) batch(n int) ([]float32, []uint8) {
	x, y := make([]float32, n*784), make([]uint8, n)
	for i := range y {
		c := s.r.IntN(10)
		y[i] = uint8(c)
		gain := 0.5 + 0.5*s.r.Float32()
		for j := 0; j < 784; j++ {
			v := gain*s.protos[c][j] + 0.5*float32(s.r.NormFloat64())
			x[i*784+j] = min(max(v, 0), 1)
		}
	}
	return x, y
}

// train runs plain SGD and returns the mean loss of the first and last ten
// steps and the accuracy on fresh samples.
func train(m Model, steps, batch int, lr float32) (first, last float32, acc float64) {
	data := newSynthetic(5)
	p, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
	m.Init(p, 7)
	for step := 0; step < steps; step++ {
		x, y := data.batch(batch)
		loss := m.Grad(p, g, x, y, batch)
		kernel.AxpyUnitary(-lr, g, p)
		if step < 10 {
			first += loss / 10
		}
		if step >= steps-10 {
			last += loss / 10
		}
	}
	x, y := data.batch(500)
	return first, last, Accuracy(m, p, x, y, 64)
}

func TestSGDLearns(t *testing.T) {
	for _, tc := range []struct {
		name         string
		steps, batch int
	}{
		{"mlp", 300, 16},
		{"cnn", 80, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := New(tc.name, Image28)
			first, last, acc := train(m, tc.steps, tc.batch, 0.05)
			t.Logf("loss %.3f -> %.3f, held-out accuracy %.3f", first, last, acc)
			if first < 1.8 {
				t.Errorf("initial loss %v: an untrained 10-class model should be near ln 10", first)
			}
			if last > 0.4*first {
				t.Errorf("loss fell only from %v to %v", first, last)
			}
			if acc < 0.9 {
				t.Errorf("held-out accuracy %v, want >= 0.9", acc)
			}
		})
	}
}
