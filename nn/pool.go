package nn

import "math/rand/v2"

// maxPool2 is 2×2 max pooling with stride 2 on NHWC activations
// (h×w×c → h/2×w/2×c, an odd last row or column is dropped as in PyTorch).
// forward remembers which input won each window so backward can route the
// gradient there; ties go to the first in row-major window order.
type maxPool2 struct {
	h, w, c int
	arg     []int32 // per output element: index of the winning input within the sample
}

func newMaxPool2(h, w, c int) *maxPool2 { return &maxPool2{h: h, w: w, c: c} }

func (m *maxPool2) inSize() int                    { return m.h * m.w * m.c }
func (m *maxPool2) outSize() int                   { return (m.h / 2) * (m.w / 2) * m.c }
func (m *maxPool2) numParams() int                 { return 0 }
func (m *maxPool2) init(_ []float32, _ *rand.Rand) {}

func (m *maxPool2) forward(_, x, y []float32, batch int) {
	m.arg = growI32(m.arg, batch*m.outSize())
	oh, ow, c := m.h/2, m.w/2, m.c
	for n := 0; n < batch; n++ {
		img := x[n*m.inSize() : (n+1)*m.inSize()]
		out := y[n*m.outSize() : (n+1)*m.outSize()]
		arg := m.arg[n*m.outSize() : (n+1)*m.outSize()]
		for oy := 0; oy < oh; oy++ {
			for ox := 0; ox < ow; ox++ {
				o := (oy*ow + ox) * c
				i00 := ((2*oy)*m.w + 2*ox) * c
				i01, i10, i11 := i00+c, i00+m.w*c, i00+m.w*c+c
				for ch := 0; ch < c; ch++ {
					best, at := img[i00+ch], i00+ch
					if v := img[i01+ch]; v > best {
						best, at = v, i01+ch
					}
					if v := img[i10+ch]; v > best {
						best, at = v, i10+ch
					}
					if v := img[i11+ch]; v > best {
						best, at = v, i11+ch
					}
					out[o+ch], arg[o+ch] = best, int32(at)
				}
			}
		}
	}
}

func (m *maxPool2) backward(_, _, _, dy, dx, _ []float32, batch int) {
	if dx == nil {
		return
	}
	clear(dx[:batch*m.inSize()])
	for n := 0; n < batch; n++ {
		g := dx[n*m.inSize() : (n+1)*m.inSize()]
		d := dy[n*m.outSize() : (n+1)*m.outSize()]
		for i, at := range m.arg[n*m.outSize() : (n+1)*m.outSize()] {
			g[at] += d[i]
		}
	}
}

// relu is max(x, 0) element-wise; its gradient is taken as 0 at 0.
type relu struct{ n int }

func (r relu) inSize() int                    { return r.n }
func (r relu) outSize() int                   { return r.n }
func (r relu) numParams() int                 { return 0 }
func (r relu) init(_ []float32, _ *rand.Rand) {}

func (r relu) forward(_, x, y []float32, batch int) {
	y = y[:batch*r.n]
	for i, v := range x[:batch*r.n] {
		y[i] = max(v, 0)
	}
}

func (r relu) backward(_, _, y, dy, dx, _ []float32, batch int) {
	if dx == nil {
		return
	}
	n := batch * r.n
	y, dy, dx = y[:n], dy[:n], dx[:n]
	for i, v := range y {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

func growI32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
