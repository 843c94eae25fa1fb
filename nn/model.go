package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// Model is a classifier whose parameters live in one flat float32 vector
// owned by the caller, so that a worker can push and pull it in blocks and a
// server shard can own a contiguous range of it.
//
// A Model value owns scratch buffers sized by the largest batch seen; it is
// not safe for concurrent use. Give each worker goroutine its own (they may
// share the read-only params). Once buffers have grown, Grad and Predict
// allocate nothing.
type Model interface {
	// Name is the name New accepts for this model.
	Name() string
	// NumParams is the length of the parameter and gradient vectors.
	NumParams() int
	// InputSize is the number of float32 inputs per sample (784 for 28×28).
	InputSize() int
	// NumClasses is the number of output classes; labels lie in [0, NumClasses).
	NumClasses() int
	// Init fills params deterministically from seed: the same seed gives
	// the same bits on every machine.
	Init(params []float32, seed uint64)
	// Grad computes the mean softmax cross-entropy loss over the batch and
	// writes its gradient (also a batch mean) into grad, reading params
	// only. x is batch×InputSize row-major (pixels/255), y the labels.
	// It panics with a message naming the problem if a length or label is
	// wrong; CheckBatch reports the same as an error.
	Grad(params, grad []float32, x []float32, y []uint8, batch int) (loss float32)
	// Predict writes the most likely class of each of the batch rows of x
	// into out.
	Predict(params []float32, x []float32, batch int, out []uint8)
}

var constructors = map[string]func() Model{
	"mlp": func() Model { return NewMLP() },
	"cnn": func() Model { return NewCNN() },
}

// Names lists the model names New accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(constructors))
	for n := range constructors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns a fresh model by name: "mlp" or "cnn". A flat model's name
// (ParseFlat) is refused with an error saying where such a model trains.
func New(name string) (Model, error) {
	f, ok := constructors[name]
	if _, flat, err := ParseFlat(name); err != nil {
		return nil, err
	} else if flat {
		return nil, fmt.Errorf("nn: model %s is a flat vector of a model pacer does not know: pacer server shards hold it, "+
			"and its workers are your own PyTorch scripts (docs/python.md, \"A model of your own\"); pacer cannot train, "+
			"evaluate or simulate it itself", name)
	}
	if !ok {
		return nil, fmt.Errorf("nn: unknown model %q (valid: %v)", name, Names())
	}
	return f(), nil
}

// NewMLP returns the multilayer perceptron 784-256-128-10 with ReLU, as
// torch_baseline.py's MLP (235,146 parameters).
func NewMLP() Model {
	ws := new(kernel.Workspace)
	return newSeq("mlp", 10,
		newDense(784, 256, ws), relu{256},
		newDense(256, 128, ws), relu{128},
		newDense(128, 10, ws),
	)
}

// NewCNN returns the convolutional network of torch_baseline.py
// (184,586 parameters): conv 5×5×32 valid, ReLU, max-pool 2, conv 5×5×64,
// ReLU, max-pool 2, dense 1024→128, ReLU, dense 128→10. Pooling is applied
// before the ReLU; the two commute (max is monotone, and both route the
// gradient to the same winner when it is positive), and pooling first gives
// the ReLU a quarter of the elements.
func NewCNN() Model {
	ws := new(kernel.Workspace)
	return newSeq("cnn", 10,
		newConv(28, 28, 1, 5, 32, ws), newMaxPool2(24, 24, 32), relu{12 * 12 * 32},
		newConv(12, 12, 32, 5, 64, ws), newMaxPool2(8, 8, 64), relu{4 * 4 * 64},
		newDense(1024, 128, ws), relu{128},
		newDense(128, 10, ws),
	)
}

// layer is one stage of a sequential network working on a whole batch of
// row-major activations. Its parameters are the slice p of the model's flat
// vector at the layer's offset.
type layer interface {
	inSize() int // per sample
	outSize() int
	numParams() int
	init(p []float32, r *rand.Rand)
	// forward writes y (batch×outSize) from x (batch×inSize).
	forward(p, x, y []float32, batch int)
	// backward is called after forward on the same x and y. It overwrites
	// g (len numParams) with the parameter gradient and, unless dx is nil,
	// dx with the input gradient.
	backward(p, x, y, dy, dx, g []float32, batch int)
}

// Accuracy returns the fraction of the rows of x (len(y) samples) whose
// predicted class equals y, predicting batchSize rows at a time (at least
// 1). It returns 0 for no samples and panics, as Predict does, if x holds
// fewer than len(y) rows. It allocates one batchSize-long output buffer.
func Accuracy(m Model, params []float32, x []float32, y []uint8, batchSize int) float64 {
	n := len(y)
	if n == 0 {
		return 0
	}
	batchSize = max(1, min(batchSize, n))
	in := m.InputSize()
	out := make([]uint8, batchSize)
	correct := 0
	for i := 0; i < n; i += batchSize {
		b := min(batchSize, n-i)
		m.Predict(params, x[i*in:(i+b)*in], b, out)
		for j := 0; j < b; j++ {
			if out[j] == y[i+j] {
				correct++
			}
		}
	}
	return float64(correct) / float64(n)
}

// CheckBatch reports, as an error, what Grad would panic on: a parameter,
// gradient, input or label slice of the wrong length for batch, or a label
// outside [0, NumClasses). grad may be nil to check a Predict call.
func CheckBatch(m Model, params, grad []float32, x []float32, y []uint8, batch int) error {
	if batch < 1 {
		return fmt.Errorf("nn: %s: batch %d, want >= 1", m.Name(), batch)
	}
	if len(params) != m.NumParams() {
		return fmt.Errorf("nn: %s: %d parameters, want %d", m.Name(), len(params), m.NumParams())
	}
	if grad != nil && len(grad) != m.NumParams() {
		return fmt.Errorf("nn: %s: gradient of length %d, want %d", m.Name(), len(grad), m.NumParams())
	}
	if len(x) < batch*m.InputSize() {
		return fmt.Errorf("nn: %s: %d inputs for batch %d, want %d", m.Name(), len(x), batch, batch*m.InputSize())
	}
	if y != nil {
		if len(y) < batch {
			return fmt.Errorf("nn: %s: %d labels for batch %d", m.Name(), len(y), batch)
		}
		if i := slices.IndexFunc(y[:batch], func(l uint8) bool { return int(l) >= m.NumClasses() }); i >= 0 {
			return fmt.Errorf("nn: %s: label %d of sample %d, want < %d", m.Name(), y[i], i, m.NumClasses())
		}
	}
	return nil
}
