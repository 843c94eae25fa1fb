package compare

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
)

// A failing run stops the dispatch of further runs and its error comes
// back naming the run. The dispatcher once polled the error slots while
// the workers still wrote them: a data race, which scripts/test's race
// pass over this test reported at once.
func TestParallelStopsAtAFailure(t *testing.T) {
	const n = 200
	e := &engine{c: Config{Specs: []paradigm.Spec{{Kind: paradigm.BSP}}, Seeds: n, Parallel: 4, Job: job.Config{Seed: 1}}}
	var ran atomic.Int32
	boom := errors.New("boom")
	_, err := e.parallel(context.Background(), func(k int) (*runstats.Run, error) {
		ran.Add(1)
		if k%5 == 3 {
			return nil, boom
		}
		return &runstats.Run{}, nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "bsp (seed ") {
		t.Fatalf("err %v, want the failing run's error naming it", err)
	}
	if got := ran.Load(); got >= n {
		t.Errorf("all %d runs ran after a failure", got)
	}
}

// A comparison stopped by its context (Ctrl-C) stops the runs in flight,
// not only the dispatch of new ones: every run here would train for hours
// of virtual time. It returns at once, says how far it got, and gives no
// summary.
func TestRunStopsRunsInFlight(t *testing.T) {
	for _, mode := range []runstats.Mode{runstats.Virtual, runstats.Sim} {
		c := Config{Mode: mode, Specs: specs(t, "bsp", "asp"), Seeds: 2, Parallel: 2,
			Job: job.Config{Workers: 4, Seed: 1, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100, Batch: 16}}
		if mode == runstats.Virtual {
			c.Horizon = 1000 * time.Hour
		} else {
			c.Iterations = 50_000_000
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		t0 := time.Now()
		s, err := Run(ctx, c)
		if !errors.Is(err, context.Canceled) || s != nil || !strings.Contains(err.Error(), "interrupted after 0 of 4 runs") {
			t.Fatalf("%s: summary %v, err %v", mode, s != nil, err)
		}
		if el := time.Since(t0); el > 10*time.Second {
			t.Errorf("%s: returned %s after the start", mode, el)
		}
	}
}
