package nn

import (
	"fmt"
	"math/rand/v2"
)

// seq chains layers into a classifier and implements Model. It owns the
// activation and activation-gradient buffers: acts[i] is the input of layer
// i (acts[0] aliases the caller's x), acts[len(layers)] the logits.
type seq struct {
	name    string
	classes int
	layers  []layer
	offs    []int // offset of each layer's parameters in the flat vector
	nparams int
	acts    [][]float32
	grads   [][]float32 // grads[i] is the gradient with respect to acts[i]
	capB    int         // batch the buffers are sized for
	// first is the first layer with parameters: the layers before it (the
	// input's transpose to NHWC, a padding) need no backward pass, and it
	// needs no input gradient.
	first int
}

func newSeq(name string, classes int, layers ...layer) *seq {
	s := &seq{name: name, classes: classes, layers: layers}
	for i, l := range layers {
		if i > 0 && layers[i-1].outSize() != l.inSize() {
			panic(fmt.Sprintf("nn: %s: layer %d takes %d inputs, previous gives %d", name, i, l.inSize(), layers[i-1].outSize()))
		}
		s.offs = append(s.offs, s.nparams)
		if s.nparams == 0 {
			s.first = i
		}
		s.nparams += l.numParams()
	}
	if layers[len(layers)-1].outSize() != classes {
		panic(fmt.Sprintf("nn: %s: last layer gives %d outputs for %d classes", name, layers[len(layers)-1].outSize(), classes))
	}
	s.acts = make([][]float32, len(layers)+1)
	s.grads = make([][]float32, len(layers)+1)
	return s
}

func (s *seq) Name() string    { return s.name }
func (s *seq) NumParams() int  { return s.nparams }
func (s *seq) InputSize() int  { return s.layers[0].inSize() }
func (s *seq) NumClasses() int { return s.classes }

func (s *seq) params(p []float32, i int) []float32 {
	return p[s.offs[i] : s.offs[i]+s.layers[i].numParams()]
}

// Init seeds a PCG generator with (seed, a fixed constant) and lets each
// layer draw its parameters in order.
func (s *seq) Init(params []float32, seed uint64) {
	if len(params) != s.nparams {
		panic(fmt.Sprintf("nn: %s: Init with %d parameters, want %d", s.name, len(params), s.nparams))
	}
	r := rand.New(rand.NewPCG(seed, 0x70616365725f6e6e)) // "pacer_nn"
	for i, l := range s.layers {
		l.init(s.params(params, i), r)
	}
}

// reserve sizes the buffers for batch; they only grow.
func (s *seq) reserve(batch int) {
	if batch <= s.capB {
		return
	}
	for i, l := range s.layers {
		s.acts[i+1] = make([]float32, batch*l.outSize())
		s.grads[i+1] = make([]float32, batch*l.outSize())
		if i > 0 {
			s.grads[i] = make([]float32, batch*l.inSize())
		}
	}
	s.capB = batch
}

func (s *seq) forward(params, x []float32, batch int) []float32 {
	s.reserve(batch)
	s.acts[0] = x[:batch*s.InputSize()]
	for i, l := range s.layers {
		l.forward(s.params(params, i), s.acts[i], s.acts[i+1], batch)
	}
	return s.acts[len(s.layers)][:batch*s.classes]
}

func (s *seq) Grad(params, grad []float32, x []float32, y []uint8, batch int) float32 {
	if err := CheckBatch(s, params, grad, x, y, batch); err != nil {
		panic(err.Error())
	}
	logits := s.forward(params, x, batch)
	last := len(s.layers)
	loss := softmaxCrossEntropy(logits, y, s.classes, batch, s.grads[last])
	for i := last - 1; i >= s.first; i-- {
		var dx []float32
		if i > s.first {
			dx = s.grads[i] // no gradient is needed below the first layer with parameters
		}
		s.layers[i].backward(s.params(params, i), s.acts[i], s.acts[i+1], s.grads[i+1], dx, s.params(grad, i), batch)
	}
	s.acts[0] = nil // do not keep the caller's batch alive
	return loss
}

func (s *seq) Predict(params []float32, x []float32, batch int, out []uint8) {
	if err := CheckBatch(s, params, nil, x, nil, batch); err != nil {
		panic(err.Error())
	}
	if len(out) < batch {
		panic(fmt.Sprintf("nn: %s: Predict output has %d elements for batch %d", s.name, len(out), batch))
	}
	logits := s.forward(params, x, batch)
	for i := 0; i < batch; i++ {
		out[i] = uint8(argmax(logits[i*s.classes : (i+1)*s.classes]))
	}
	s.acts[0] = nil
}
