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

// constructors build each model's layers for an input shape. A model's
// layers, and so its parameter count and layout, follow from the shape:
// the first dense layer takes whatever the convolutions and poolings leave.
var constructors = map[string]func(b *builder){
	"mlp":           mlpLayers,
	"cnn":           cnnLayers,
	"alexnet-small": alexnetSmallLayers,
	"cifar-net":     cifarNetLayers,
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

// New returns a fresh model by name (Names: "alexnet-small", "cifar-net",
// "cnn", "mlp") for samples of the given shape, which is the data set's
// (Image28 for Fashion-MNIST and MNIST, 3×32×32 for CIFAR-10). It refuses
// an unknown name, a shape too small for the model's windows, and a flat
// model's name (ParseFlat), saying where such a model trains.
func New(name string, in Shape) (Model, error) {
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
	if err := in.check(); err != nil {
		return nil, err
	}
	b := &builder{name: name, in: in, ws: new(kernel.Workspace), h: in.H, w: in.W, c: in.C}
	f(b)
	if b.err != nil {
		return nil, b.err
	}
	return newSeq(name, 10, b.layers...), nil
}

// NewMLP returns the multilayer perceptron 784-256-128-10 with ReLU, as
// torch_baseline.py's MLP (235,146 parameters): New("mlp", Image28).
func NewMLP() Model { return mustNew("mlp") }

// NewCNN returns New("cnn", Image28), torch_baseline.py's CNN (184,586
// parameters).
func NewCNN() Model { return mustNew("cnn") }

func mustNew(name string) Model {
	m, err := New(name, Image28)
	if err != nil {
		panic(err)
	}
	return m
}

// mlpLayers: dense in→256, ReLU, dense 256→128, ReLU, dense 128→10, on the
// sample's features in their stored (c, y, x) order, as PyTorch's flatten.
func mlpLayers(b *builder) {
	b.dense(256)
	b.relu()
	b.dense(128)
	b.relu()
	b.dense(10)
}

// cnnLayers: conv 5×5×32 valid, max-pool 2, ReLU, conv 5×5×64 valid,
// max-pool 2, ReLU, dense →128, ReLU, dense 128→10 (on 28×28×1: 184,586
// parameters). Pooling is applied before the ReLU; the two commute (max is
// monotone, and both route the gradient to the same winner when it is
// positive), and pooling first gives the ReLU a quarter of the elements.
func cnnLayers(b *builder) {
	b.conv(5, 32, 0)
	b.pool()
	b.relu()
	b.conv(5, 64, 0)
	b.pool()
	b.relu()
	b.dense(128)
	b.relu()
	b.dense(10)
}

// alexnetSmallLayers is the downsized AlexNet of the DSSP and ElasticBSP
// papers (3 convolutional and 2 fully connected layers before the softmax
// layer; the papers give no sizes, these are docs/models.md's): conv 5×5×32
// same, pool, ReLU, conv 5×5×64 same, pool, ReLU, conv 3×3×128 same, pool,
// ReLU, dense →384, ReLU, dense 384→192, ReLU, dense 192→10. On 3×32×32:
// 990,218 parameters; on 1×28×28: 644,554.
func alexnetSmallLayers(b *builder) {
	b.conv(5, 32, 2)
	b.pool()
	b.relu()
	b.conv(5, 64, 2)
	b.pool()
	b.relu()
	b.conv(3, 128, 1)
	b.pool()
	b.relu()
	b.dense(384)
	b.relu()
	b.dense(192)
	b.relu()
	b.dense(10)
}

// cifarNetLayers is the staleness-aware paper's CIFAR-10 network, Caffe's
// cifar10_full (3 convolution + pooling layers and one fully connected
// layer): conv 5×5×32 same, pool, ReLU, conv 5×5×32 same, pool, ReLU, conv
// 5×5×64 same, pool, ReLU, dense →10. On 3×32×32: 89,578 parameters (the
// paper's "about 90K"); on 1×28×28: 83,498. Its pools are 2×2 max pools
// where Caffe's are 3×3 with stride 2 (max, then average twice) and its
// local response normalisation is left out: docs/models.md.
func cifarNetLayers(b *builder) {
	b.conv(5, 32, 2)
	b.pool()
	b.relu()
	b.conv(5, 32, 2)
	b.pool()
	b.relu()
	b.conv(5, 64, 2)
	b.pool()
	b.relu()
	b.dense(10)
}

// builder appends layers, following the activation's shape: h×w×c while
// it is an image (NHWC once a convolution has read it), flat after the
// first dense layer. The first error (a window larger than its input)
// stops it.
type builder struct {
	name    string
	in      Shape
	ws      *kernel.Workspace
	layers  []layer
	h, w, c int
	nhwc    bool // the activation is NHWC (the input is CHW until a convolution)
	flat    bool
	err     error
}

func (b *builder) size() int { return b.h * b.w * b.c }

func (b *builder) add(l layer) { b.layers = append(b.layers, l) }

// conv adds a k×k convolution to cout channels with pad zeros on each side
// (0: valid; (k-1)/2: same), after the transpose to NHWC if the input has
// several channels.
func (b *builder) conv(k, cout, p int) {
	if b.err != nil {
		return
	}
	if b.flat {
		panic("nn: " + b.name + ": convolution after a dense layer")
	}
	if b.h+2*p < k || b.w+2*p < k {
		b.err = fmt.Errorf("nn: model %s needs larger images than %v: its %d×%d window meets a %d×%d activation", b.name, b.in, k, k, b.h+2*p, b.w+2*p)
		return
	}
	if !b.nhwc && b.c > 1 {
		b.add(toNHWC{b.h, b.w, b.c})
	}
	b.nhwc = true
	if p > 0 {
		b.add(pad{b.h, b.w, b.c, p})
		b.h, b.w = b.h+2*p, b.w+2*p
	}
	b.add(newConv(b.h, b.w, b.c, k, cout, b.ws))
	b.h, b.w, b.c = b.h-k+1, b.w-k+1, cout
}

// pool adds a 2×2 max pool with stride 2.
func (b *builder) pool() {
	if b.err != nil {
		return
	}
	if b.h < 2 || b.w < 2 {
		b.err = fmt.Errorf("nn: model %s needs larger images than %v: its 2×2 pool meets a %d×%d activation", b.name, b.in, b.h, b.w)
		return
	}
	b.add(newMaxPool2(b.h, b.w, b.c))
	b.h, b.w = b.h/2, b.w/2
}

func (b *builder) relu() {
	if b.err == nil {
		b.add(relu{b.size()})
	}
}

func (b *builder) dense(out int) {
	if b.err != nil {
		return
	}
	b.add(newDense(b.size(), out, b.ws))
	b.h, b.w, b.c, b.flat = 1, 1, out, true
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

// Loss returns the mean softmax cross-entropy of params over the rows of x
// (len(y) samples), batchSize rows at a time through Grad, whose gradient
// goes to grad (NumParams long; nil allocates one). The batch means are
// summed in float64, weighted by their sizes, in row order: the same rows
// give the same bits in every process. It returns 0 for no samples.
func Loss(m Model, params, grad []float32, x []float32, y []uint8, batchSize int) float64 {
	n := len(y)
	if n == 0 {
		return 0
	}
	if grad == nil {
		grad = make([]float32, m.NumParams())
	}
	batchSize = max(1, min(batchSize, n))
	in := m.InputSize()
	var sum float64
	for lo := 0; lo < n; lo += batchSize {
		b := min(batchSize, n-lo)
		sum += float64(m.Grad(params, grad, x[lo*in:(lo+b)*in], y[lo:lo+b], b)) * float64(b)
	}
	return sum / float64(n)
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
