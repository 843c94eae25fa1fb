package nn

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// torchOps is each model's forward pass as bench/torch_baseline.py writes
// it: "convN:p" is Conv2d convN with padding p, "pool" max_pool2d(2),
// "fcN" Linear fcN (after a flatten).
var torchOps = map[string][]string{
	"mlp":           {"fc1", "relu", "fc2", "relu", "fc3"},
	"cnn":           {"conv1:0", "relu", "pool", "conv2:0", "relu", "pool", "fc1", "relu", "fc2"},
	"alexnet-small": {"conv1:2", "relu", "pool", "conv2:2", "relu", "pool", "conv3:1", "relu", "pool", "fc1", "relu", "fc2", "relu", "fc3"},
	"cifar-net":     {"conv1:2", "relu", "pool", "conv2:2", "relu", "pool", "conv3:2", "relu", "pool", "fc1"},
}

// torchForward computes logits as PyTorch computes them from the
// exchange layout's tensors: NCHW activations (the input a c×h×w image in
// (c, y, x) order), Linear's out×in weights, Conv2d's cout×cin×k×k with
// zero padding, flatten in (c, y, x) order. Float64, plain loops.
func torchForward(name string, ts map[string]Tensor, x []float32, in Shape) []float64 {
	a := make([]float64, len(x))
	for i, v := range x {
		a[i] = float64(v)
	}
	c, h, w := in.C, in.H, in.W
	for _, op := range torchOps[name] {
		switch {
		case op == "relu":
			for i := range a {
				a[i] = math.Max(a[i], 0)
			}
		case op == "pool":
			ph, pw := h/2, w/2
			p := make([]float64, c*ph*pw)
			for o := 0; o < c; o++ {
				for r := 0; r < ph; r++ {
					for q := 0; q < pw; q++ {
						m := math.Inf(-1)
						for dy := 0; dy < 2; dy++ {
							for dx := 0; dx < 2; dx++ {
								m = math.Max(m, a[(o*h+2*r+dy)*w+2*q+dx])
							}
						}
						p[(o*ph+r)*pw+q] = m
					}
				}
			}
			a, h, w = p, ph, pw
		case strings.HasPrefix(op, "conv"):
			t, padding, _ := strings.Cut(op, ":")
			pd, _ := strconv.Atoi(padding)
			wt, b := ts[t+".weight"], ts[t+".bias"]
			co, k := wt.Shape[0], wt.Shape[2]
			oh, ow := h+2*pd-k+1, w+2*pd-k+1
			y := make([]float64, co*oh*ow)
			for o := 0; o < co; o++ {
				for r := 0; r < oh; r++ {
					for q := 0; q < ow; q++ {
						s := float64(b.Data[o])
						for ci := 0; ci < c; ci++ {
							for ky := 0; ky < k; ky++ {
								for kx := 0; kx < k; kx++ {
									iy, ix := r+ky-pd, q+kx-pd
									if iy < 0 || iy >= h || ix < 0 || ix >= w {
										continue
									}
									s += float64(wt.Data[((o*c+ci)*k+ky)*k+kx]) * a[(ci*h+iy)*w+ix]
								}
							}
						}
						y[(o*oh+r)*ow+q] = s
					}
				}
			}
			a, c, h, w = y, co, oh, ow
		default: // fcN
			wt, b := ts[op+".weight"], ts[op+".bias"]
			out, n := wt.Shape[0], wt.Shape[1]
			y := make([]float64, out)
			for o := range y {
				s := float64(b.Data[o])
				for i := 0; i < n; i++ {
					s += float64(wt.Data[o*n+i]) * a[i]
				}
				y[o] = s
			}
			a, c, h, w = y, out, 1, 1
		}
	}
	return a
}

// The exchange layout is PyTorch's: a forward pass written the way
// PyTorch computes it, reading the exported tensors, gives pacer's logits;
// and FromTensors inverts Tensors exactly.
func TestExchangeLayoutIsTorchs(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Shape
	}{
		{"mlp", Image28}, {"cnn", Image28}, {"alexnet-small", Image28}, {"cifar-net", Image28},
		{"mlp", cifarShape}, {"cnn", cifarShape}, {"alexnet-small", cifarShape}, {"cifar-net", cifarShape},
	} {
		name, in := c.name, c.in
		m, _ := New(name, in)
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
		x := make([]float32, batch*in.Size())
		for i := range x {
			x[i] = r.Float32()
		}
		s := m.(*seq)
		logits := s.forward(p, x, batch)
		for n := 0; n < batch; n++ {
			want := torchForward(name, byName, x[n*in.Size():(n+1)*in.Size()], in)
			for c, v := range want {
				if got := float64(logits[n*10+c]); math.Abs(got-v) > 1e-4*(1+math.Abs(v)) {
					t.Fatalf("%s on %v: sample %d class %d: pacer %g, torch layout %g", name, in, n, c, got, v)
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
		if got, shape, err := ModelOf(ts, Image28, cifarShape); err != nil || got.Name() != name || shape != in {
			t.Errorf("ModelOf(%s's tensors on %v) = %v, %v, %v", name, in, got, shape, err)
		}
	}
}

// Tensors of the wrong set or shape are refused with the reason.
func TestFromTensorsRefuses(t *testing.T) {
	m, _ := New("mlp", Image28)
	ts, _ := Tensors(m, make([]float32, m.NumParams()))
	bad := append([]Tensor(nil), ts...)
	bad[0].Shape = []int{784, 256}
	if _, err := FromTensors(m, bad); err == nil {
		t.Error("a transposed fc1.weight was accepted")
	}
	if _, err := FromTensors(m, ts[:5]); err == nil {
		t.Error("a missing tensor was accepted")
	}
	if _, _, err := ModelOf(ts[:5], Image28); err == nil {
		t.Error("ModelOf found a model for five of six tensors")
	}
}
