package job

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/data"
)

// threeChannel is a loaded set as Limit receives it: cifar10's 3
// channels of 2 pixels each (its 32×32 scaled down), 3 training and 2 test
// samples.
func threeChannel() *data.Dataset {
	tr := &data.Set{X: []float32{
		0.1, 0.3, 0.9, 0.9, 0.2, 0.2,
		0.5, 0.7, 0, 0, 0.4, 0.6,
		0.2, 0.4, 0.6, 0, 1, 1,
	}, Y: []uint8{0, 1, 0}, N: 3, Dim: 6, Classes: 2, Name: "t/train"}
	te := &data.Set{X: []float32{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, Y: []uint8{1, 0}, N: 2, Dim: 6, Classes: 2, Name: "t/test"}
	return &data.Dataset{Train: tr, Test: te, Source: "test"}
}

// --normalize mean takes the mean over the training set after
// --train-limit only, one per channel of the data set's shape, and
// subtracts it from both splits; the set given is not changed.
func TestLimitSubtractsTheLimitedTrainingMean(t *testing.T) {
	ds := threeChannel()
	out, err := Limit(ds, Config{Dataset: "cifar10", TrainLimit: 2, Normalize: NormalizeMean})
	if err != nil {
		t.Fatal(err)
	}
	// By hand, samples 0 and 1 only: channel 0 (0.1+0.3+0.5+0.7)/4 = 0.4,
	// channel 1 (0.9+0.9+0+0)/4 = 0.45, channel 2 (0.2+0.2+0.4+0.6)/4 =
	// 0.35 (sample 2, left out by the limit, would move every one).
	want := []float64{0.4, 0.45, 0.35}
	for c := range want {
		if d := out.Mean[c] - want[c]; d > 1e-7 || d < -1e-7 {
			t.Errorf("channel %d: mean %v, want %v", c, out.Mean[c], want[c])
		}
	}
	if out.Train.N != 2 || out.Test.N != 2 {
		t.Fatalf("limited to %d/%d samples", out.Train.N, out.Test.N)
	}
	for i, v := range out.Test.X {
		if w := float32(float64(ds.Test.X[i]) - out.Mean[(i%6)/2]); v != w {
			t.Errorf("test feature %d: %v, want %v", i, v, w)
		}
	}
	if ds.Mean != nil || ds.Train.X[0] != 0.1 || ds.Test.X[0] != 1 {
		t.Error("Limit changed the set it was given")
	}
	// Off: the set as cut, the same arrays, no mean.
	plain, err := Limit(ds, Config{Dataset: "cifar10", TrainLimit: 2})
	if err != nil || plain.Mean != nil || &plain.Test.X[0] != &ds.Test.X[0] {
		t.Errorf("without --normalize: %v, mean %v, or a copy", err, plain.Mean)
	}
	// A normalized set is not normalized again.
	if _, err := Limit(out, Config{Dataset: "cifar10", Normalize: NormalizeMean}); err == nil {
		t.Error("a normalized set was normalized twice")
	}
	// Features that do not split into the data set's channels: an error.
	odd := threeChannel()
	odd.Train = &data.Set{X: make([]float32, 8), Y: make([]uint8, 2), N: 2, Dim: 4, Classes: 2, Name: "t/train"}
	if _, err := Limit(odd, Config{Dataset: "cifar10", Normalize: NormalizeMean}); err == nil || !strings.Contains(err.Error(), "3 channels") {
		t.Errorf("4 features in 3 channels: %v", err)
	}
}

// A set handed to a driver must be normalized as its job says.
func TestCheckNormalized(t *testing.T) {
	raw := threeChannel()
	norm, err := Limit(raw, Config{Dataset: "synthetic", Normalize: NormalizeMean})
	if err != nil {
		t.Fatal(err)
	}
	mean, none := Config{Normalize: NormalizeMean}, Config{}
	if CheckNormalized(raw, none) != nil || CheckNormalized(norm, mean) != nil {
		t.Error("a matching set refused")
	}
	if err := CheckNormalized(raw, mean); err == nil || !strings.Contains(err.Error(), "job.Data") {
		t.Errorf("raw set for a mean job: %v", err)
	}
	if err := CheckNormalized(norm, none); err == nil {
		t.Error("normalized set for a plain job accepted")
	}
}
