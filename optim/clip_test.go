package optim

import (
	"math"
	"testing"
)

// Against torch.nn.utils.clip_grad_norm_'s rule worked by hand: g = (3, 4)
// has norm 5; clipped to 1 it becomes (3, 4)·1/(5 + 1e-6); to 10 it stays.
func TestClipNorm(t *testing.T) {
	g := []float32{3, 4}
	if n := ClipNorm(g, 1); n != 5 {
		t.Errorf("norm %g, want 5", n)
	}
	c := 1 / (5 + 1e-6)
	if math.Abs(float64(g[0])-3*c) > 1e-7 || math.Abs(float64(g[1])-4*c) > 1e-7 {
		t.Errorf("clipped to %v, want %v", g, []float64{3 * c, 4 * c})
	}
	h := []float32{3, 4}
	if ClipNorm(h, 10); h[0] != 3 || h[1] != 4 {
		t.Errorf("a gradient under the norm changed: %v", h)
	}
	big := make([]float32, 1<<20)
	for i := range big {
		big[i] = 1e-3
	}
	if n := ClipNorm(big, 0.5); math.Abs(n-1.024) > 1e-6 {
		t.Errorf("norm of 2^20 values of 1e-3: %g, want 1.024", n)
	}
	var ss float64
	for _, v := range big {
		ss += float64(v) * float64(v)
	}
	if math.Abs(math.Sqrt(ss)-0.5) > 1e-6 {
		t.Errorf("after clipping to 0.5 the norm is %g", math.Sqrt(ss))
	}
}

// EMA against the rule by hand: from 0 toward 1 with alpha 0.9, 0.1 then
// 0.19 then 0.271.
func TestEMA(t *testing.T) {
	avg, w := []float32{0, 10}, []float32{1, 10}
	for i, want := range []float64{0.1, 0.19, 0.271} {
		EMA(avg, w, 0.9)
		if math.Abs(float64(avg[0])-want) > 1e-6 || avg[1] != 10 {
			t.Errorf("step %d: %v, want [%g 10]", i+1, avg, want)
		}
	}
}
