package nn

import (
	"math"
	"math/rand/v2"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// conv is a 2-D convolution with stride 1 and no padding ("valid") on NHWC
// activations: input h×w×cin per sample, output oh×ow×cout with
// oh = h-k+1, ow = w-k+1. Parameters: W (cout × k·k·cin, each filter ordered
// kh, kw, ci so that it lines up with an im2col row) followed by b (cout).
//
// forward lowers the convolution to matrix products over chunks of the
// batch: every output pixel becomes a row of col (k·k·cin wide), and
// y = col·Wᵀ + b, which is already NHWC. In NHWC, the k·cin values of one
// filter row are contiguous in the input, so im2col is k copies per pixel.
type conv struct {
	h, w, cin, k, cout int
	oh, ow             int
	ws                 *kernel.Workspace
	col                []float32 // im2col of one chunk; forward leaves the last one for backward
	gt                 []float32 // the weight gradient transposed, when computed so
	budget             int       // colBudget; tests lower it to exercise chunking
	sums               []float32 // scratch of columnSums
}

func newConv(h, w, cin, k, cout int, ws *kernel.Workspace) *conv {
	return &conv{h: h, w: w, cin: cin, k: k, cout: cout, oh: h - k + 1, ow: w - k + 1, ws: ws, budget: colBudget}
}

func (c *conv) inSize() int    { return c.h * c.w * c.cin }
func (c *conv) outSize() int   { return c.oh * c.ow * c.cout }
func (c *conv) patch() int     { return c.k * c.k * c.cin }
func (c *conv) numParams() int { return c.cout*c.patch() + c.cout }

// init uses ±1/√fan_in with fan_in = k·k·cin, as PyTorch's Conv2d default.
func (c *conv) init(p []float32, r *rand.Rand) {
	uniform(p, 1/math.Sqrt(float64(c.patch())), r)
}

// colBudget bounds the im2col buffer, in floats (4 MiB). The batch is
// lowered a chunk of samples at a time: for the second CNN layer the whole
// batch of 64 would need 13 MB per model instance, and so per worker
// goroutine. At batch 64 this keeps the first layer in one chunk (3.7 MB,
// nothing to lower twice) and cuts the second into four; measured against
// lowering everything at once the difference is within noise, and a 1 MiB
// budget costs about 3%.
const colBudget = 1 << 20

// chunk is the number of samples lowered at once.
func (c *conv) chunk(batch int) int {
	return max(1, min(batch, c.budget/(c.oh*c.ow*c.patch())))
}

func (c *conv) forward(p, x, y []float32, batch int) {
	kk, px := c.patch(), c.oh*c.ow
	ch := c.chunk(batch)
	c.col = growF32(c.col, ch*px*kk)
	w, b := p[:c.cout*kk], p[c.cout*kk:c.numParams()]
	fillRows(y, batch*px, c.cout, b)
	for n0 := 0; n0 < batch; n0 += ch {
		nb := min(ch, batch-n0)
		c.im2col(x[n0*c.inSize():], nb)
		c.ws.Sgemm(false, true, nb*px, c.cout, kk, 1, c.col, kk, w, kk, 1, y[n0*c.outSize():], c.cout)
	}
}

// backward walks the chunks in reverse, so the first one it needs is the
// one forward left in col; the others are lowered again (cheaper than
// keeping them all).
func (c *conv) backward(p, x, _, dy, dx, g []float32, batch int) {
	kk, px := c.patch(), c.oh*c.ow
	ch := c.chunk(batch)
	w := p[:c.cout*kk]
	gw, gb := g[:c.cout*kk], g[c.cout*kk:c.numParams()]
	// A first layer (cin = 1: 25 values per patch, 32 filters) wastes less
	// of the 6×16 or 6×32 register tile on dWᵀ = colᵀ·dy (25×32) than on
	// dW (32×25); the transpose back is 800 values.
	transposed := kk < c.cout
	if transposed {
		c.gt = growF32(c.gt, kk*c.cout)
	}
	last := (batch - 1) / ch * ch
	for n0 := last; n0 >= 0; n0 -= ch {
		nb := min(ch, batch-n0)
		if n0 != last {
			c.im2col(x[n0*c.inSize():], nb)
		}
		rows := nb * px
		dyc := dy[n0*c.outSize() : (n0+nb)*c.outSize()]
		beta := float32(1)
		if n0 == last {
			beta = 0
		}
		if transposed {
			c.ws.Sgemm(true, false, kk, c.cout, rows, 1, c.col, kk, dyc, c.cout, beta, c.gt, c.cout)
		} else {
			c.ws.Sgemm(true, false, c.cout, kk, rows, 1, dyc, c.cout, c.col, kk, beta, gw, kk)
		}
		if dx != nil {
			// dcol = dy·W overwrites col (no longer needed), then col2im
			// adds each patch back onto the pixels it was copied from.
			c.ws.Sgemm(false, false, rows, kk, c.cout, 1, dyc, c.cout, w, kk, 0, c.col, kk)
			c.col2im(dx[n0*c.inSize():], nb)
		}
	}
	if transposed {
		for q := 0; q < kk; q++ {
			for o := 0; o < c.cout; o++ {
				gw[o*kk+q] = c.gt[q*c.cout+o]
			}
		}
	}
	c.sums = columnSums(dy, batch*px, c.cout, gb, c.sums)
}

func (c *conv) im2col(x []float32, batch int) {
	if c.cin == 1 {
		c.im2colPlanar(x, batch)
		return
	}
	run := c.k * c.cin // one filter row: k pixels × cin channels, contiguous
	kk := c.patch()
	r := 0
	for n := 0; n < batch; n++ {
		img := x[n*c.inSize() : (n+1)*c.inSize()]
		for oy := 0; oy < c.oh; oy++ {
			for ox := 0; ox < c.ow; ox++ {
				dst := c.col[r*kk : (r+1)*kk]
				for ky := 0; ky < c.k; ky++ {
					src := ((oy+ky)*c.w + ox) * c.cin
					d, s := dst[ky*run:(ky+1)*run], img[src:src+run]
					if run >= 32 {
						copy(d, s)
						continue
					}
					for i, v := range s { // short runs (first layer): a call to copy costs more
						d[i] = v
					}
				}
				r++
			}
		}
	}
}

// im2colPlanar is im2col for one input channel, where a filter row is only
// k values: it walks each (ky, kx) tap across a whole output row instead,
// so the inner loop is ow long rather than k.
func (c *conv) im2colPlanar(x []float32, batch int) {
	kk := c.patch()
	for n := 0; n < batch; n++ {
		img := x[n*c.inSize() : (n+1)*c.inSize()]
		for oy := 0; oy < c.oh; oy++ {
			rows := c.col[(n*c.oh+oy)*c.ow*kk : (n*c.oh+oy+1)*c.ow*kk]
			for ky := 0; ky < c.k; ky++ {
				src := img[(oy+ky)*c.w : (oy+ky+1)*c.w]
				for kx := 0; kx < c.k; kx++ {
					q := ky*c.k + kx
					for ox, v := range src[kx : kx+c.ow] {
						rows[ox*kk+q] = v
					}
				}
			}
		}
	}
}

func (c *conv) col2im(dx []float32, batch int) {
	run := c.k * c.cin
	kk := c.patch()
	clear(dx[:batch*c.inSize()])
	r := 0
	for n := 0; n < batch; n++ {
		img := dx[n*c.inSize() : (n+1)*c.inSize()]
		for oy := 0; oy < c.oh; oy++ {
			for ox := 0; ox < c.ow; ox++ {
				src := c.col[r*kk : (r+1)*kk]
				for ky := 0; ky < c.k; ky++ {
					dst := ((oy+ky)*c.w + ox) * c.cin
					kernel.AxpyUnitary(1, src[ky*run:(ky+1)*run], img[dst:dst+run])
				}
				r++
			}
		}
	}
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
