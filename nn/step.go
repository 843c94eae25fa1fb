package nn

import (
	"math/rand/v2"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// Step is one worker's iteration as BenchmarkTrainStep times it: forward,
// backward and a plain SGD step (w -= lr·g) on one batch, one goroutine.
// It lives outside the benchmark so that `base: auto` (package steptime)
// times the very computation the benchmark measures, not a copy of it.
// The inputs are random pixels and labels: the step's arithmetic does
// not depend on their values.
type Step struct {
	m              Model
	p, g, x        []float32
	y              []uint8
	batch, batches int
	i              int
}

// stepData bounds the random inputs a Step cycles through (16 batches, as
// the benchmark has always used, unless that would pass 2²² floats): a
// large batch of CIFAR-10 images gets fewer, at least one.
const stepData = 1 << 22

// NewStep builds the model name for samples of shape in (New's rules)
// and a Step of batch samples on it.
func NewStep(name string, in Shape, batch int) (*Step, error) {
	m, err := New(name, in)
	if err != nil {
		return nil, err
	}
	dim := in.Size()
	batches := max(1, min(16, stepData/max(1, batch*dim)))
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, batches*batch*dim)
	for i := range x {
		x[i] = float32(r.IntN(256)) / 255
	}
	y := make([]uint8, batches*batch)
	for i := range y {
		y[i] = uint8(r.IntN(10))
	}
	p, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
	m.Init(p, 1)
	return &Step{m: m, p: p, g: g, x: x, y: y, batch: batch, batches: batches}, nil
}

// Model is the model the step trains.
func (s *Step) Model() Model { return s.m }

// Run does one step, on the next of its batches, and returns its loss.
func (s *Step) Run() float32 {
	j, n, dim := s.i%s.batches, s.batch, s.m.InputSize()
	loss := s.m.Grad(s.p, s.g, s.x[j*n*dim:(j+1)*n*dim], s.y[j*n:(j+1)*n], n)
	kernel.AxpyUnitary(-0.01, s.g, s.p)
	s.i++
	return loss
}
