package paradigm

import "time"

// Flusher is an aggregator that can apply what it holds before its
// rule would: a driver switching paradigms mid-job (auto) flushes every
// shard so that no accepted gradient is lost across the switch. The
// apply is what the rule would have done with the gradients that came:
// their mean (BSP, backup workers), or their staleness weights over the
// full buffer (softsync: a partial buffer takes a smaller step).
type Flusher interface {
	Flush(now time.Duration) (applied bool, a Apply)
}

func (a *syncAgg) Flush(now time.Duration) (bool, Apply) {
	if len(a.buf) == 0 {
		return false, Apply{}
	}
	return true, a.closeRound()
}

func (a *backupAgg) Flush(now time.Duration) (bool, Apply) {
	if len(a.buf) == 0 {
		return false, Apply{}
	}
	return true, a.close(1/float64(len(a.buf)), 1)
}

func (a *softsyncAgg) Flush(now time.Duration) (bool, Apply) {
	if len(a.buf) == 0 {
		return false, Apply{}
	}
	a.out = append(a.out[:0], a.buf...)
	a.buf = a.buf[:0]
	a.v++
	return true, Apply{Version: a.v, LRScale: 1, Grads: a.out}
}

// Drain ends this policy's part of a job that goes on under another
// (auto's switch): every gradient an aggregator holds is applied (Finish,
// then each Flusher), in shard order. An aggregator that holds gradients
// and cannot flush them (PSP's partial push, delay's queue: not among
// auto's candidates) keeps them; the driver's Reset drops and counts them.
func (pol *Policy) Drain(now time.Duration) []ShardApply {
	out := append([]ShardApply(nil), pol.Finish(now)...)
	for i, a := range pol.Aggs {
		if f, ok := a.(Flusher); ok {
			if applied, ap := f.Flush(now); applied {
				ap.Grads = append([]Contribution(nil), ap.Grads...)
				out = append(out, ShardApply{i, ap})
			}
		}
	}
	return out
}
