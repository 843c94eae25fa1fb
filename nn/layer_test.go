package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// checkLayer compares forward with the reference and backward with central
// differences of L = Σ R·forward(p, x) for a random R, over every parameter
// and every input.
func checkLayer(t *testing.T, l layer, batch int, r *rand.Rand) {
	t.Helper()
	p := make([]float32, l.numParams())
	l.init(p, r)
	for i := range p { // parameters away from the init scale too
		p[i] += float32(0.1 * r.NormFloat64())
	}
	x := randF32(r, batch*l.inSize())
	R := to64(randF32(r, batch*l.outSize()))

	y := make([]float32, batch*l.outSize())
	l.forward(p, x, y, batch)
	p64, x64 := to64(p), to64(x)
	want := refForward(l, p64, x64, batch)
	for i := range y {
		if !gradClose(y[i], want[i]) {
			t.Fatalf("forward y[%d] = %v, reference %v", i, y[i], want[i])
		}
	}

	dy := make([]float32, len(R))
	for i, v := range R {
		dy[i] = float32(v)
	}
	g := make([]float32, l.numParams())
	dx := make([]float32, len(x))
	for i := range g {
		g[i] = float32(1e9) // backward must overwrite, not accumulate
	}
	l.backward(p, x, y, dy, dx, g, batch)

	loss := func() float64 {
		out := refForward(l, p64, x64, batch)
		var s float64
		for i, v := range out {
			s += R[i] * v
		}
		return s
	}
	for i := range p64 {
		if n := centralDiff(p64, i, loss); !gradClose(g[i], n) {
			t.Fatalf("dL/dp[%d] = %v, numeric %v", i, g[i], n)
		}
	}
	for i := range x64 {
		if n := centralDiff(x64, i, loss); !gradClose(dx[i], n) {
			t.Fatalf("dL/dx[%d] = %v, numeric %v", i, dx[i], n)
		}
	}
}

func TestLayerGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ws := new(kernel.Workspace)
	// Fixed shapes for both ways conv computes its weight gradient (fewer
	// patch values than filters, and more), then random ones.
	t.Run("toNHWC", func(t *testing.T) { checkLayer(t, toNHWC{3, 4, 3}, 2, r) })
	t.Run("pad", func(t *testing.T) { checkLayer(t, pad{3, 4, 2, 2}, 2, r) })
	t.Run("conv/kk<cout", func(t *testing.T) { checkLayer(t, newConv(6, 5, 1, 2, 6, ws), 2, r) })
	t.Run("conv/kk>cout", func(t *testing.T) { checkLayer(t, newConv(6, 5, 3, 2, 4, ws), 2, r) })
	for trial := 0; trial < 3; trial++ {
		in, out, batch := 1+r.IntN(20), 1+r.IntN(20), 1+r.IntN(4)
		t.Run(fmt.Sprintf("dense/%dx%d/b%d", in, out, batch), func(t *testing.T) {
			checkLayer(t, newDense(in, out, ws), batch, r)
		})
		h, w, cin, k, cout := 3+r.IntN(5), 3+r.IntN(5), 1+r.IntN(3), 1+r.IntN(3), 1+r.IntN(4)
		t.Run(fmt.Sprintf("conv/%dx%dx%d/k%d/c%d/b%d", h, w, cin, k, cout, batch), func(t *testing.T) {
			checkLayer(t, newConv(h, w, cin, k, cout, ws), batch, r)
		})
		ph, pw, pc := 2+r.IntN(6), 2+r.IntN(6), 1+r.IntN(3)
		t.Run(fmt.Sprintf("pool/%dx%dx%d/b%d", ph, pw, pc, batch), func(t *testing.T) {
			checkLayer(t, newMaxPool2(ph, pw, pc), batch, r)
		})
		t.Run(fmt.Sprintf("relu/%d/b%d", in, batch), func(t *testing.T) {
			checkLayer(t, relu{in}, batch, r)
		})
	}
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const classes, batch = 5, 3
	logits := randF32(r, classes*batch)
	logits[0] = 80 // must not overflow
	y := []uint8{0, 4, 2}
	d := make([]float32, len(logits))
	loss := softmaxCrossEntropy(logits, y, classes, batch, d)
	l64 := to64(logits)
	f := func() float64 { return refLoss(l64, y, classes, batch) }
	if !gradClose(loss, f()) {
		t.Fatalf("loss %v, reference %v", loss, f())
	}
	for i := range l64 {
		if n := centralDiff(l64, i, f); !gradClose(d[i], n) {
			t.Fatalf("dL/dlogit[%d] = %v, numeric %v", i, d[i], n)
		}
	}
}

func TestMaxPoolOddAndTies(t *testing.T) {
	// 3×3 input, one channel: the last row and column are dropped, and a
	// tie goes to the first element of the window.
	m := newMaxPool2(3, 3, 1)
	x := []float32{1, 1, 9, 0, 0, 9, 9, 9, 9}
	y := make([]float32, 1)
	m.forward(nil, x, y, 1)
	if y[0] != 1 {
		t.Fatalf("pool = %v, want 1", y[0])
	}
	dx := []float32{5, 5, 5, 5, 5, 5, 5, 5, 5} // all overwritten
	m.backward(nil, x, y, []float32{2}, dx, nil, 1)
	if dx[0] != 2 || dx[1] != 0 || dx[2] != 0 || dx[5] != 0 || dx[8] != 0 {
		t.Fatalf("pool backward = %v", dx)
	}
}

// TestConvChunks runs batches that span several weight-gradient chunks
// (with the budget lowered to two and a half samples) and checks them against the same
// samples one at a time: the outputs and input gradients must match and the
// weight gradients add up.
func TestConvChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	ws := new(kernel.Workspace)
	for _, c := range []*conv{newConv(9, 8, 3, 3, 4, ws), newConv(10, 10, 1, 3, 12, ws)} {
		c.budget = 5 * c.oh * c.ow * c.patch() / 2
		batch := 7
		if c.chunk(batch) != 2 {
			t.Fatalf("chunk of %d samples, want 2", c.chunk(batch))
		}
		p := make([]float32, c.numParams())
		c.init(p, r)
		x := randF32(r, batch*c.inSize())
		dy := randF32(r, batch*c.outSize())
		y := make([]float32, batch*c.outSize())
		dx := make([]float32, batch*c.inSize())
		g := make([]float32, c.numParams())
		c.forward(p, x, y, batch)
		c.backward(p, x, y, dy, dx, g, batch)

		sum := make([]float64, c.numParams())
		y1 := make([]float32, c.outSize())
		dx1 := make([]float32, c.inSize())
		g1 := make([]float32, c.numParams())
		for n := 0; n < batch; n++ {
			xn := x[n*c.inSize() : (n+1)*c.inSize()]
			c.forward(p, xn, y1, 1)
			c.backward(p, xn, y1, dy[n*c.outSize():(n+1)*c.outSize()], dx1, g1, 1)
			for i, v := range y1 {
				if !gradClose(y[n*c.outSize()+i], float64(v)) {
					t.Fatalf("sample %d: y[%d] = %v in the batch, %v alone", n, i, y[n*c.outSize()+i], v)
				}
			}
			for i, v := range dx1 {
				if !gradClose(dx[n*c.inSize()+i], float64(v)) {
					t.Fatalf("sample %d: dx[%d] = %v in the batch, %v alone", n, i, dx[n*c.inSize()+i], v)
				}
			}
			for i, v := range g1 {
				sum[i] += float64(v)
			}
		}
		for i, v := range sum {
			if !gradClose(g[i], v) {
				t.Fatalf("dW[%d] = %v over the batch, per-sample sum %v", i, g[i], v)
			}
		}
	}
}

// TestConvWideInputGradient covers a layer with more filters than one k
// block of kernel.SgemmScatterAdd, whose input gradient is added a block
// of filters at a time, against the float64 sum over all filters.
func TestConvWideInputGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	c := newConv(4, 5, 2, 2, kernel.MaxScatterK+3, new(kernel.Workspace))
	const batch = 2
	p := randF32(r, c.numParams())
	x := randF32(r, batch*c.inSize())
	y := make([]float32, batch*c.outSize())
	dy := randF32(r, batch*c.outSize())
	dx := randF32(r, batch*c.inSize()) // overwritten
	c.forward(p, x, y, batch)
	c.backward(p, x, y, dy, dx, make([]float32, c.numParams()), batch)
	want := make([]float64, len(dx))
	kk := c.patch()
	for n := 0; n < batch; n++ {
		for oy := 0; oy < c.oh; oy++ {
			for ox := 0; ox < c.ow; ox++ {
				g := dy[((n*c.oh+oy)*c.ow+ox)*c.cout:][:c.cout]
				for ky := 0; ky < c.k; ky++ {
					for kx := 0; kx < c.k; kx++ {
						for ci := 0; ci < c.cin; ci++ {
							q := (ky*c.k+kx)*c.cin + ci
							var s float64
							for o, v := range g {
								s += float64(v) * float64(p[o*kk+q])
							}
							want[n*c.inSize()+((oy+ky)*c.w+ox+kx)*c.cin+ci] += s
						}
					}
				}
			}
		}
	}
	for i, v := range dx {
		if !gradClose(v, want[i]) {
			t.Fatalf("dx[%d] = %v, reference %v", i, v, want[i])
		}
	}
}

// A padded layer's output is fully rewritten on each call: a border
// dirtied between calls (the buffer is the model's) reads as zeros again.
func TestPadRewritesBorder(t *testing.T) {
	l := pad{2, 3, 2, 1}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	y := make([]float32, l.outSize())
	for i := range y {
		y[i] = -1
	}
	l.forward(nil, x, y, 1)
	want := to64(y)
	ref := refForward(l, nil, to64(x), 1)
	for i := range ref {
		if want[i] != ref[i] {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], ref[i])
		}
	}
}
