package compare

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

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
