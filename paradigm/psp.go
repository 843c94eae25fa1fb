package paradigm

import "time"

// pspAgg is PSP's partial push (PARADIGMS.md §7): shard at version t accepts
// gradients tagged ≥ t, at most one per worker per version; once d ≥ c the τ1
// grace window starts; the update comes when it ends or every live worker has
// answered. Linear scaling in d: η is the learning rate of a full round of K
// gradients (BSP's), so the step is (d/K)·η·(sum/d) — which is BSP exactly
// when d = K (the reduction PSP(c=K, b=1) ≡ BSP).
type pspAgg struct {
	round
	c        int
	t1       time.Duration
	deadline time.Duration
	armed    bool
}

func newPSPAgg(k, c int, t1 time.Duration) *pspAgg {
	return &pspAgg{round: newRound(k), c: c, t1: t1}
}

// KnownDropped reports whether a worker whose gradient carries tag knows,
// having seen the shard answer at version seen, that the shard will drop
// it: under PSP a shard at version t drops gradients tagged below t, and
// versions only grow. The worker then need not send that block (the PSP
// paper's communication saving); every other paradigm sends every block.
func (s Spec) KnownDropped(tag, seen uint64) bool { return s.Kind == PSP && tag < seen }

func (a *pspAgg) needC() int { return max(1, min(a.c, a.nLive)) }

func (a *pspAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	if !a.known(g.Worker) || a.have[g.Worker] || g.Clock < a.v {
		a.dropped++
		return false, false, Apply{}
	}
	a.add(g)
	ok, ap := a.check(now)
	return true, ok, ap
}

func (a *pspAgg) check(now time.Duration) (bool, Apply) {
	d := len(a.buf)
	if d == 0 || d < a.needC() {
		return false, Apply{}
	}
	if a.missing > 0 && a.t1 > 0 {
		if !a.armed {
			a.armed, a.deadline = true, now+a.t1
		}
		if now < a.deadline {
			return false, Apply{}
		}
	}
	return true, a.apply()
}

func (a *pspAgg) apply() Apply {
	a.armed = false
	d := float64(len(a.buf))
	return a.close(1/d, d/float64(max(1, a.nLive)))
}

func (a *pspAgg) Deadline() (time.Duration, bool) { return a.deadline, a.armed }

func (a *pspAgg) Tick(now time.Duration) (bool, Apply) {
	if !a.armed || now < a.deadline {
		return false, Apply{}
	}
	return true, a.apply()
}

func (a *pspAgg) Leave(now time.Duration, p int) (bool, Apply) {
	a.leave(p)
	return a.check(now)
}

func (a *pspAgg) Join(now time.Duration, p int) { a.join(p) }
