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
// The convolution is a matrix product with the im2col matrix (a row of
// k·k·cin input values per output pixel), which is never materialised:
// kernel.SgemmGather reads it straight from the input through two offset
// tables, pix (where each output pixel's window starts) and tap (where each
// filter value sits in a window). forward is y = col·Wᵀ + b, already NHWC,
// with the bias added as the tiles are stored; the weight gradient is dWᵀ =
// colᵀ·dy, the same tables swapped. The input gradient, dcol = dy·W added
// back onto the pixels it came from (col2im), is kernel.SgemmScatterAdd
// through the same tables.
type conv struct {
	h, w, cin, k, cout int
	oh, ow             int
	ws                 *kernel.Workspace
	gt                 []float32 // the weight gradient, transposed
	pix, tap           []int32   // offsets of the windows in a batch, of the taps in a window
	budget             int       // colBudget; tests lower it to exercise chunking
	sums               []float32 // scratch of columnSums
}

func newConv(h, w, cin, k, cout int, ws *kernel.Workspace) *conv {
	c := &conv{h: h, w: w, cin: cin, k: k, cout: cout, oh: h - k + 1, ow: w - k + 1, ws: ws, budget: colBudget}
	for ky := 0; ky < k; ky++ {
		for kx := 0; kx < k; kx++ {
			for ci := 0; ci < cin; ci++ {
				c.tap = append(c.tap, int32((ky*w+kx)*cin+ci))
			}
		}
	}
	return c
}

func (c *conv) inSize() int    { return c.h * c.w * c.cin }
func (c *conv) outSize() int   { return c.oh * c.ow * c.cout }
func (c *conv) patch() int     { return c.k * c.k * c.cin }
func (c *conv) numParams() int { return c.cout*c.patch() + c.cout }

// init uses ±1/√fan_in with fan_in = k·k·cin, as PyTorch's Conv2d default.
func (c *conv) init(p []float32, r *rand.Rand) {
	uniform(p, 1/math.Sqrt(float64(c.patch())), r)
}

// colBudget, in floats, is how much of the im2col matrix one chunk of the
// weight gradient covers (4 MiB: at batch 64, the first layer's batch in one
// chunk, the second's in four). The chunks bounded the matrix's buffer when
// it was materialised; the weight gradient still sums the batch chunk by
// chunk, last chunk first, each in Sgemm's k blocks, because that keeps the
// sums, and so the bits and every recorded trajectory, of that time.
const colBudget = 1 << 20

// chunk is the number of samples per weight-gradient chunk.
func (c *conv) chunk(batch int) int {
	return max(1, min(batch, c.budget/(c.oh*c.ow*c.patch())))
}

// windows returns the offsets of the output pixels' windows in a batch of
// the given size, sample-major as the rows of y.
func (c *conv) windows(batch int) []int32 {
	px := c.oh * c.ow
	if len(c.pix) >= batch*px {
		return c.pix[:batch*px]
	}
	c.pix = c.pix[:0]
	for n := 0; n < batch; n++ {
		for oy := 0; oy < c.oh; oy++ {
			for ox := 0; ox < c.ow; ox++ {
				c.pix = append(c.pix, int32(n*c.inSize()+(oy*c.w+ox)*c.cin))
			}
		}
	}
	return c.pix
}

func (c *conv) forward(p, x, y []float32, batch int) {
	kk, rows := c.patch(), batch*c.oh*c.ow
	w, b := p[:c.cout*kk], p[c.cout*kk:c.numParams()]
	c.ws.SgemmGather(rows, c.cout, kk, x[:batch*c.inSize()], c.windows(batch), c.tap, true, w, kk, b, 0, y, c.cout)
}

func (c *conv) backward(p, x, _, dy, dx, g []float32, batch int) {
	kk, px := c.patch(), c.oh*c.ow
	ch := c.chunk(batch)
	w := p[:c.cout*kk]
	gw, gb := g[:c.cout*kk], g[c.cout*kk:c.numParams()]
	c.gt = growF32(c.gt, kk*c.cout)
	pix := c.windows(batch)
	last := (batch - 1) / ch * ch
	for n0 := last; n0 >= 0; n0 -= ch {
		nb := min(ch, batch-n0)
		rows := nb * px
		beta := float32(1)
		if n0 == last {
			beta = 0
		}
		c.ws.SgemmGather(kk, c.cout, rows, x[n0*c.inSize():(n0+nb)*c.inSize()], c.tap, pix[:rows], false,
			dy[n0*c.outSize():(n0+nb)*c.outSize()], c.cout, nil, beta, c.gt, c.cout)
	}
	for q := 0; q < kk; q++ {
		for o := 0; o < c.cout; o++ {
			gw[o*kk+q] = c.gt[q*c.cout+o]
		}
	}
	c.sums = columnSums(dy, batch*px, c.cout, gb, c.sums)
	if dx == nil {
		return
	}
	// More filters than one k block of the scatter (none in the models)
	// are added a block at a time: the same sum, rounded in between.
	clear(dx[:batch*c.inSize()])
	for o := 0; o < c.cout; o += kernel.MaxScatterK {
		ob := min(kernel.MaxScatterK, c.cout-o)
		c.ws.SgemmScatterAdd(batch*px, kk, ob, dy[o:], c.cout, w[o*kk:], kk, dx, pix, c.tap)
	}
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
