package runstats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A diverged run's losses (NaN, ±Inf) are written as null, which JSON can
// hold, and read back as NaN; finite ones keep their bytes.
func TestLossesNotFiniteAsNull(t *testing.T) {
	one := 1.5
	r := Run{Paradigm: "asp", TrainLoss: Losses{2.25, math.NaN(), math.Inf(1)}, BatchLoss: []*float64{nil, &one, ptr(math.NaN())}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"train_loss":[2.25,null,null]`) || !strings.Contains(string(b), `"batch_loss":[null,1.5,null]`) {
		t.Fatalf("JSON %s", b)
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.TrainLoss) != 3 || back.TrainLoss[0] != 2.25 || !math.IsNaN(back.TrainLoss[1]) || !math.IsNaN(back.TrainLoss[2]) {
		t.Errorf("read back %v", back.TrainLoss)
	}
	if r.BatchLoss[2] == nil || !math.IsNaN(*r.BatchLoss[2]) {
		t.Error("marshalling changed the run's own batch loss")
	}
}

func ptr(v float64) *float64 { return &v }
