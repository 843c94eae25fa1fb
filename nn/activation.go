package nn

import (
	"math"
	"math/rand/v2"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// The element-wise nonlinearity and the loss.

// relu is max(x, 0) element-wise; its gradient is taken as 0 at 0.
type relu struct{ n int }

func (r relu) inSize() int                    { return r.n }
func (r relu) outSize() int                   { return r.n }
func (r relu) numParams() int                 { return 0 }
func (r relu) init(_ []float32, _ *rand.Rand) {}

func (r relu) forward(_, x, y []float32, batch int) {
	kernel.ReluTo(y, x[:batch*r.n])
}

func (r relu) backward(_, _, y, dy, dx, _ []float32, batch int) {
	if dx != nil {
		kernel.ReluBackwardTo(dx, y[:batch*r.n], dy)
	}
}

// softmaxCrossEntropy returns the mean over the batch of
// -log softmax(logits)[label] and writes its gradient with respect to the
// logits, (softmax - onehot)/batch, into dlogits. Folding 1/batch in here
// makes every gradient downstream a batch mean without another pass.
// Exponentials are taken in float64 after subtracting the row maximum, so
// large logits cannot overflow.
func softmaxCrossEntropy(logits []float32, labels []uint8, classes, batch int, dlogits []float32) float32 {
	var total float64
	inv := 1 / float64(batch)
	for i := 0; i < batch; i++ {
		row := logits[i*classes : (i+1)*classes]
		d := dlogits[i*classes : (i+1)*classes]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v - m))
		}
		y := int(labels[i])
		total += math.Log(s) - float64(row[y]-m)
		for j, v := range row {
			p := math.Exp(float64(v-m)) / s
			if j == y {
				p--
			}
			d[j] = float32(p * inv)
		}
	}
	return float32(total * inv)
}

// argmax returns the index of the largest value, the first on ties.
func argmax(row []float32) int {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	return best
}
