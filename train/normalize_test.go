package train

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/pacer-ps/pacer/job"
)

// --normalize mean (issue 18): a run on the training set's mean-subtracted
// images trains (well above the 10% of chance after three epochs of 2,000 samples), records the
// mean it subtracted (Fashion-MNIST's, over these samples, near the whole
// set's 0.286), and is deterministic; a set handed in raw for such a job is
// refused.
func TestNormalizedRunTrains(t *testing.T) {
	base := job.Config{Dataset: "fashion-mnist", TrainLimit: 2000, TestLimit: 500, Normalize: job.NormalizeMean}
	ds, err := job.Data(base)
	if err != nil {
		t.Skipf("Fashion-MNIST not available: %v", err)
	}
	cfg := quick("ssp:s=2", 2)
	cfg.Dataset, cfg.TrainLimit, cfg.TestLimit, cfg.Normalize = base.Dataset, base.TrainLimit, base.TestLimit, base.Normalize
	cfg.Epochs, cfg.EvalEvery = 3, 1
	var out [2][]byte
	for i := range out {
		r, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Normalize != job.NormalizeMean || len(r.ChannelMean) != 1 || math.Abs(r.ChannelMean[0]-0.286) > 0.02 {
			t.Fatalf("recorded normalize %q, mean %v", r.Normalize, r.ChannelMean)
		}
		t.Logf("with: final %.3f", r.FinalAccuracy)
		if r.FinalAccuracy < 0.6 {
			t.Errorf("final accuracy %.3f after three epochs on centred images: it did not train", r.FinalAccuracy)
		}
		out[i], _ = json.Marshal(r)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two normalized runs with one seed differ")
	}
	if !bytes.Contains(out[0], []byte(`"normalize":"mean","channel_mean":[`)) {
		t.Errorf("summary lacks the normalization: %s", out[0][:200])
	}
	raw := fashion(t, 2000, 500)
	if _, err := Virtual(cfg, raw, nil); err == nil {
		t.Error("a raw set trained a --normalize mean job")
	}
	// Off, the summary says nothing of it (earlier runs keep their bytes).
	cfg.Normalize = ""
	r, err := Virtual(cfg, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("without: final %.3f", r.FinalAccuracy)
	if b, _ := json.Marshal(r); bytes.Contains(b, []byte("normalize")) || bytes.Contains(b, []byte("channel_mean")) {
		t.Error("a run without --normalize mentions it")
	}
}
