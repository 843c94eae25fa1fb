package nn

import (
	"math"
	"math/rand/v2"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// dense is a fully connected layer y = x·W + b. Its parameters are W
// (in×out: row i holds the weights out of input i, the transpose of
// torch.nn.Linear's layout) followed by b (out). In this layout the forward
// product reads W in place; out×in would make Sgemm gather Wᵀ into panels on
// every forward pass, a fifth of the MLP's step.
type dense struct {
	in, out int
	ws      *kernel.Workspace
	sums    []float32 // scratch of columnSums
}

func newDense(in, out int, ws *kernel.Workspace) *dense { return &dense{in: in, out: out, ws: ws} }

func (d *dense) inSize() int    { return d.in }
func (d *dense) outSize() int   { return d.out }
func (d *dense) numParams() int { return d.out*d.in + d.out }

// init draws W and b uniformly from ±1/√in, the bound PyTorch's default
// (Kaiming-uniform with a = √5) gives for Linear.
func (d *dense) init(p []float32, r *rand.Rand) {
	uniform(p, 1/math.Sqrt(float64(d.in)), r)
}

func (d *dense) forward(p, x, y []float32, batch int) {
	w, b := p[:d.out*d.in], p[d.out*d.in:d.numParams()]
	fillRows(y, batch, d.out, b)
	d.ws.Sgemm(false, false, batch, d.out, d.in, 1, x, d.in, w, d.out, 1, y, d.out)
}

func (d *dense) backward(p, x, _, dy, dx, g []float32, batch int) {
	w := p[:d.out*d.in]
	gw, gb := g[:d.out*d.in], g[d.out*d.in:d.numParams()]
	// dW = xᵀ·dy, the sum over the batch (dy already carries the 1/batch).
	d.ws.Sgemm(true, false, d.in, d.out, batch, 1, x, d.in, dy, d.out, 0, gw, d.out)
	d.sums = columnSums(dy, batch, d.out, gb, d.sums)
	if dx != nil {
		d.ws.Sgemm(false, true, batch, d.in, d.out, 1, dy, d.out, w, d.out, 0, dx, d.in)
	}
}

// columnSums writes the sum over the rows of the rows×cols matrix m into s:
// the bias gradient. Short rows (a conv layer's 32 channels over 36,864
// pixels) are summed f at a time as rows of f·cols values, which turns tens
// of thousands of short kernel calls into a few hundred long ones; the f
// partial sums are folded at the end.
func columnSums(m []float32, rows, cols int, s []float32, scratch []float32) []float32 {
	f := 1
	for g := min(rows, 4096/max(cols, 1)); g > 1; g-- {
		if rows%g == 0 {
			f = g
			break
		}
	}
	wide := f * cols
	scratch = growF32(scratch, wide)
	clear(scratch)
	for i := 0; i < rows/f; i++ {
		kernel.AxpyUnitary(1, m[i*wide:(i+1)*wide], scratch)
	}
	copy(s[:cols], scratch[:cols])
	for q := 1; q < f; q++ {
		kernel.AxpyUnitary(1, scratch[q*cols:(q+1)*cols], s[:cols])
	}
	return scratch
}

// fillRows sets each of the rows rows of y (cols wide) to b, doubling the
// filled prefix with each copy: log₂(rows) calls instead of rows.
func fillRows(y []float32, rows, cols int, b []float32) {
	if rows == 0 {
		return
	}
	copy(y[:cols], b[:cols])
	for done := 1; done < rows; {
		n := min(done, rows-done)
		copy(y[done*cols:(done+n)*cols], y[:n*cols])
		done += n
	}
}

// uniform fills p with independent draws from U(-bound, bound).
func uniform(p []float32, bound float64, r *rand.Rand) {
	for i := range p {
		p[i] = float32((2*r.Float64() - 1) * bound)
	}
}
