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
	for i := 0; i < batch; i++ {
		copy(y[i*d.out:(i+1)*d.out], b)
	}
	d.ws.Sgemm(false, false, batch, d.out, d.in, 1, x, d.in, w, d.out, 1, y, d.out)
}

func (d *dense) backward(p, x, _, dy, dx, g []float32, batch int) {
	w := p[:d.out*d.in]
	gw, gb := g[:d.out*d.in], g[d.out*d.in:d.numParams()]
	// dW = xᵀ·dy, the sum over the batch (dy already carries the 1/batch).
	d.ws.Sgemm(true, false, d.in, d.out, batch, 1, x, d.in, dy, d.out, 0, gw, d.out)
	columnSums(dy, batch, d.out, gb)
	if dx != nil {
		d.ws.Sgemm(false, true, batch, d.in, d.out, 1, dy, d.out, w, d.out, 0, dx, d.in)
	}
}

// columnSums writes the sum over the rows of the rows×cols matrix m into s:
// the bias gradient.
func columnSums(m []float32, rows, cols int, s []float32) {
	clear(s[:cols])
	for i := 0; i < rows; i++ {
		kernel.AxpyUnitary(1, m[i*cols:(i+1)*cols], s)
	}
}

// uniform fills p with independent draws from U(-bound, bound).
func uniform(p []float32, bound float64, r *rand.Rand) {
	for i := range p {
		p[i] = float32((2*r.Float64() - 1) * bound)
	}
}
