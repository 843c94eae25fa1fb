package nn

import "testing"

var sinkLoss float32

// BenchmarkTrainStep measures what one worker does per iteration: forward,
// backward and a plain SGD step (w -= lr·g) on a batch of 64, one goroutine,
// the same work torch_baseline.py --mode throughput times per batch. Compare
// its samples/s with that script's samples_per_s on the same machine (see
// docs/benchmarks.md, "Worker compute (nn)"). TrainStep/<model> runs each
// model on 28×28×1 images (Fashion-MNIST's shape), TrainStep/cifar10/<model>
// on 3×32×32 (torch_baseline.py --shape cifar10). The step is Step, which
// `base: auto` times too.
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
	const batch = 64
	s, err := NewStep(name, in, batch)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sinkLoss = s.Run()
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
}
