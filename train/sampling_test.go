package train

import (
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/timing"
)

// Backup workers with a persistently slow worker (issue 18, item 3): with
// each worker sampling its own shard the slow worker's gradients are
// always dropped and its quarter of the data is never learnt from; with
// global sampling every sample is in an applied gradient.
func TestGlobalSamplingLearnsEverySample(t *testing.T) {
	ds, err := job.Data(job.Config{Dataset: "synthetic", TrainLimit: 1024, TestLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	learnt := map[string]float64{}
	for _, sampling := range []string{"", job.SamplingGlobal} {
		cfg := job.Config{Spec: spec("backup:b=1"), Workers: 4, Shards: 1, Dataset: "synthetic", Epochs: 6, Batch: 32, Seed: 3,
			Sampling: sampling, Timing: timing.WorkerSpec{Straggler: timing.MustStraggler("slow:worker=0,factor=3")}}
		r, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.SamplesLearnt == nil || r.Sampling != sampling {
			t.Fatalf("sampling %q: samples learnt %v, sampling %q recorded", sampling, r.SamplesLearnt, r.Sampling)
		}
		learnt[sampling] = *r.SamplesLearnt
		t.Logf("sampling %q: %.4f of the samples learnt, %d of %d gradients dropped, worker pushes %v", sampling, *r.SamplesLearnt, r.Dropped, r.Pushes, r.WorkerPushes)
	}
	if s := learnt[""]; s > 0.76 || s < 0.74 {
		t.Errorf("shard sampling learnt %.4f of the samples: want 0.75 (the slow worker's quarter never)", s)
	}
	if g := learnt[job.SamplingGlobal]; g != 1 {
		t.Errorf("global sampling learnt %.4f of the samples: want every one", g)
	}
}
