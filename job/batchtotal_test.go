package job

import (
	"strings"
	"testing"
)

// --batch-total keeps µλ constant: each worker's batch is the total over
// the workers (the staleness-aware paper's 128 over 30 learners is 4),
// filling twice changes nothing, and a --batch that disagrees is refused
// naming both.
func TestBatchTotalKeepsMuLambda(t *testing.T) {
	for _, c := range []struct{ workers, want int }{{1, 128}, {8, 16}, {30, 4}, {200, 1}} {
		j := Config{Workers: c.workers, BatchTotal: 128}
		if err := j.Fill(); err != nil {
			t.Fatal(err)
		}
		if err := j.Fill(); err != nil || j.Batch != c.want {
			t.Errorf("%d workers: batch %d (err %v), want %d", c.workers, j.Batch, err, c.want)
		}
	}
	j := Config{Workers: 8, BatchTotal: 128, Batch: 64}
	if err := j.Fill(); err == nil || !strings.Contains(err.Error(), "batch=64 and batch-total=128") {
		t.Errorf("a disagreeing batch: %v", err)
	}
	j = Config{Workers: 8, BatchTotal: -1}
	if err := j.Fill(); err == nil || !strings.Contains(err.Error(), "batch-total=-1") {
		t.Errorf("a negative total: %v", err)
	}
}
