package compare

import (
	"context"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/runstats"
)

// RunDone counts every run once, 1 to the total, whatever the parallelism:
// a progress bar's count.
func TestRunDoneCountsEveryRun(t *testing.T) {
	var got []int
	c := Config{Mode: runstats.Sim, Specs: specs(t, "bsp", "asp"), Seeds: 3, Iterations: 20, Parallel: 2,
		Job: job.Config{Workers: 3, Shards: 1, Seed: 1},
		RunDone: func(done, total int) {
			if total != 6 {
				t.Errorf("total %d, want 2 paradigms × 3 seeds", total)
			}
			got = append(got, done)
		}}
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("RunDone called %d times, want 6: %v", len(got), got)
	}
	for i, d := range got {
		if d != i+1 {
			t.Errorf("call %d reported %d done: %v", i, d, got)
		}
	}
}
