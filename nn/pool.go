package nn

import (
	"math/rand/v2"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// maxPool2 is 2×2 max pooling with stride 2 on NHWC activations
// (h×w×c → h/2×w/2×c, an odd last row or column is dropped as in PyTorch).
// It stores no argmax: backward compares the inputs with the output again
// and gives the gradient to the first input of the window (row-major) that
// equals the maximum, which is branch-free in the kernels.
type maxPool2 struct{ h, w, c int }

func newMaxPool2(h, w, c int) *maxPool2 { return &maxPool2{h: h, w: w, c: c} }

func (m *maxPool2) inSize() int                    { return m.h * m.w * m.c }
func (m *maxPool2) outSize() int                   { return (m.h / 2) * (m.w / 2) * m.c }
func (m *maxPool2) numParams() int                 { return 0 }
func (m *maxPool2) init(_ []float32, _ *rand.Rand) {}

func (m *maxPool2) forward(_, x, y []float32, batch int) {
	oh, ow, row := m.h/2, m.w/2, m.w*m.c
	for n := 0; n < batch; n++ {
		img := x[n*m.inSize() : (n+1)*m.inSize()]
		out := y[n*m.outSize() : (n+1)*m.outSize()]
		for oy := 0; oy < oh; oy++ {
			kernel.MaxPool2Row(out[oy*ow*m.c:], img[2*oy*row:], img[(2*oy+1)*row:], ow, m.c)
		}
	}
}

func (m *maxPool2) backward(_, x, y, dy, dx, _ []float32, batch int) {
	if dx == nil {
		return
	}
	oh, ow, row := m.h/2, m.w/2, m.w*m.c
	for n := 0; n < batch; n++ {
		img := x[n*m.inSize() : (n+1)*m.inSize()]
		g := dx[n*m.inSize() : (n+1)*m.inSize()]
		out := y[n*m.outSize() : (n+1)*m.outSize()]
		dout := dy[n*m.outSize() : (n+1)*m.outSize()]
		for oy := 0; oy < oh; oy++ {
			r0, r1 := 2*oy*row, (2*oy+1)*row
			o := oy * ow * m.c
			kernel.MaxPool2RowBackward(g[r0:], g[r1:], img[r0:], img[r1:], out[o:], dout[o:], ow, m.c)
			if m.w%2 == 1 { // the last pixel of both rows is in no window
				clear(g[r0+row-m.c : r0+row])
				clear(g[r1+row-m.c : r1+row])
			}
		}
		if m.h%2 == 1 {
			clear(g[(m.h-1)*row:])
		}
	}
}
