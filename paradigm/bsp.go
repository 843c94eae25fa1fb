package paradigm

import "time"

// syncAgg is BSP's aggregator (PARADIGMS.md §1): one gradient from every live
// worker for version v, then their mean (or sum) once.
type syncAgg struct {
	round
	sum bool
}

func newSyncAgg(k int, sum bool) *syncAgg { return &syncAgg{round: newRound(k), sum: sum} }

func (a *syncAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	if !a.known(g.Worker) || a.have[g.Worker] || g.Read != a.v {
		a.dropped++ // a late gradient from a removed worker, or a duplicate
		return false, false, Apply{}
	}
	a.add(g)
	ok, ap := a.due()
	return true, ok, ap
}

func (a *syncAgg) due() (bool, Apply) {
	if a.missing > 0 || len(a.buf) == 0 {
		return false, Apply{}
	}
	return true, a.closeRound()
}

// closeRound applies the buffered gradients' mean (or sum).
func (a *syncAgg) closeRound() Apply {
	w := 1.0
	if !a.sum {
		w = 1 / float64(len(a.buf))
	}
	return a.close(w, 1)
}

func (a *syncAgg) Leave(now time.Duration, p int) (bool, Apply) {
	a.leave(p)
	return a.due()
}

func (a *syncAgg) Join(now time.Duration, p int) { a.join(p) }
