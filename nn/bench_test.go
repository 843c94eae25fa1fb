package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

var sinkLoss float32

// BenchmarkTrainStep measures what one worker does per iteration: forward,
// backward and a plain SGD step (w -= lr·g) on a batch of 64, one goroutine,
// the same work torch_baseline.py --mode throughput times per batch. Compare
// its samples/s with that script's samples_per_s on the same machine (see
// docs/benchmarks.md, "Worker compute (nn)"). TrainStep/<model> runs each
// model on 28×28×1 images (Fashion-MNIST's shape), TrainStep/cifar10/<model>
// on 3×32×32 (torch_baseline.py --shape cifar10).
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) { benchStep(b, name, Image28) })
	}
	b.Run("cifar10", func(b *testing.B) {
		for _, name := range Names() {
			b.Run(name, func(b *testing.B) { benchStep(b, name, cifarShape) })
		}
	})
}

func benchStep(b *testing.B, name string, in Shape) {
	const batch, batches = 64, 16
	dim := in.Size()
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, batches*batch*dim)
	for i := range x {
		x[i] = float32(r.IntN(256)) / 255
	}
	y := make([]uint8, batches*batch)
	for i := range y {
		y[i] = uint8(r.IntN(10))
	}
	m, _ := New(name, in)
	p, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
	m.Init(p, 1)
	i := 0
	for b.Loop() {
		j := i % batches
		sinkLoss = m.Grad(p, g, x[j*batch*dim:(j+1)*batch*dim], y[j*batch:(j+1)*batch], batch)
		kernel.AxpyUnitary(-0.01, g, p)
		i++
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
}
