package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// torchForward computes logits as PyTorch computes them from the
// exchange layout's tensors: NCHW activations, Linear's out×in weights,
// Conv2d's cout×cin×k×k, flatten in (c, y, x) order. Float64, plain loops.
func torchForward(name string, ts map[string]Tensor, x []float32) []float64 {
	lin := func(t string, in []float64) []float64 {
		w, b := ts[t+".weight"], ts[t+".bias"]
		out, n := w.Shape[0], w.Shape[1]
		y := make([]float64, out)
		for o := range y {
			s := float64(b.Data[o])
			for i := 0; i < n; i++ {
				s += float64(w.Data[o*n+i]) * in[i]
			}
			y[o] = s
		}
		return y
	}
	relu := func(v []float64) []float64 {
		for i := range v {
			v[i] = math.Max(v[i], 0)
		}
		return v
	}
	// conv on a c×h×w image, then 2×2 max pooling.
	convPool := func(t string, in []float64, c, h, w int) ([]float64, int, int) {
		wt, b := ts[t+".weight"], ts[t+".bias"]
		co, k := wt.Shape[0], wt.Shape[2]
		oh, ow := h-k+1, w-k+1
		y := make([]float64, co*oh*ow)
		for o := 0; o < co; o++ {
			for r := 0; r < oh; r++ {
				for q := 0; q < ow; q++ {
					s := float64(b.Data[o])
					for ci := 0; ci < c; ci++ {
						for ky := 0; ky < k; ky++ {
							for kx := 0; kx < k; kx++ {
								s += float64(wt.Data[((o*c+ci)*k+ky)*k+kx]) * in[(ci*h+r+ky)*w+q+kx]
							}
						}
					}
					y[(o*oh+r)*ow+q] = s
				}
			}
		}
		ph, pw := oh/2, ow/2
		p := make([]float64, co*ph*pw)
		for o := 0; o < co; o++ {
			for r := 0; r < ph; r++ {
				for q := 0; q < pw; q++ {
					m := math.Inf(-1)
					for dy := 0; dy < 2; dy++ {
						for dx := 0; dx < 2; dx++ {
							m = math.Max(m, y[(o*oh+2*r+dy)*ow+2*q+dx])
						}
					}
					p[(o*ph+r)*pw+q] = m
				}
			}
		}
		return p, ph, pw
	}
	in := make([]float64, len(x))
	for i, v := range x {
		in[i] = float64(v)
	}
	if name == "mlp" {
		return lin("fc3", relu(lin("fc2", relu(lin("fc1", in)))))
	}
	a, h, w := convPool("conv1", in, 1, 28, 28)
	a, _, _ = convPool("conv2", relu(a), 32, h, w)
	return lin("fc2", relu(lin("fc1", relu(a))))
}

// The exchange layout is PyTorch's: a forward pass written the way
// PyTorch computes it, reading the exported tensors, gives pacer's logits;
// and FromTensors inverts Tensors exactly.
func TestExchangeLayoutIsTorchs(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		m, _ := New(name)
		p := make([]float32, m.NumParams())
		m.Init(p, 7)
		ts, err := Tensors(m, p)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]Tensor{}
		total := 0
		for _, x := range ts {
			byName[x.Name] = x
			total += x.Size()
		}
		if total != m.NumParams() {
			t.Errorf("%s: tensors hold %d values, the model %d", name, total, m.NumParams())
		}
		r := rand.New(rand.NewPCG(1, 2))
		const batch = 3
		x := make([]float32, batch*784)
		for i := range x {
			x[i] = r.Float32()
		}
		s := m.(*seq)
		logits := s.forward(p, x, batch)
		for n := 0; n < batch; n++ {
			want := torchForward(name, byName, x[n*784:(n+1)*784])
			for c, v := range want {
				if got := float64(logits[n*10+c]); math.Abs(got-v) > 1e-4*(1+math.Abs(v)) {
					t.Fatalf("%s: sample %d class %d: pacer %g, torch layout %g", name, n, c, got, v)
				}
			}
		}
		back, err := FromTensors(m, ts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if back[i] != p[i] {
				t.Fatalf("%s: parameter %d: %g after the round trip, %g before", name, i, back[i], p[i])
			}
		}
		if got, err := ModelOf(ts); err != nil || got.Name() != name {
			t.Errorf("ModelOf(%s's tensors) = %v, %v", name, got, err)
		}
	}
}

// Tensors of the wrong set or shape are refused with the reason.
func TestFromTensorsRefuses(t *testing.T) {
	m, _ := New("mlp")
	ts, _ := Tensors(m, make([]float32, m.NumParams()))
	bad := append([]Tensor(nil), ts...)
	bad[0].Shape = []int{784, 256}
	if _, err := FromTensors(m, bad); err == nil {
		t.Error("a transposed fc1.weight was accepted")
	}
	if _, err := FromTensors(m, ts[:5]); err == nil {
		t.Error("a missing tensor was accepted")
	}
	if _, err := ModelOf(ts[:5]); err == nil {
		t.Error("ModelOf found a model for five of six tensors")
	}
}
