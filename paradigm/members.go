package paradigm

import (
	"slices"
	"time"
)

// round is the bookkeeping the synchronous aggregators share: which live
// workers have contributed to the current version, and the buffer.
type round struct {
	live    []bool
	nLive   int
	have    []bool
	missing int // live workers that have not contributed to this version
	buf     []Contribution
	out     []Contribution
	v       uint64
	dropped int64
}

func newRound(k int) round {
	r := round{live: make([]bool, k), have: make([]bool, k), nLive: k, missing: k}
	for i := range r.live {
		r.live[i] = true
	}
	return r
}

func (r *round) add(g Grad) {
	r.have[g.Worker] = true
	if r.live[g.Worker] {
		r.missing--
	}
	r.buf = append(r.buf, Contribution{ID: g.ID, Worker: g.Worker, Staleness: int64(r.v) - int64(g.Read), Weight: 1})
}

// known reports whether p is a worker this shard has heard of.
func (r *round) known(p int) bool { return p >= 0 && p < len(r.live) }

// close ends the version: contributions sorted by worker (so the sum's order,
// and hence the weights, do not depend on arrival order), weighted by w.
func (r *round) close(w, scale float64) Apply {
	r.out = append(r.out[:0], r.buf...)
	slices.SortFunc(r.out, func(a, b Contribution) int { return a.Worker - b.Worker })
	for i := range r.out {
		r.out[i].Weight = w
	}
	r.buf = r.buf[:0]
	for i := range r.have {
		r.have[i] = false
	}
	r.missing = r.nLive
	r.v++
	return Apply{Version: r.v, LRScale: scale, Grads: r.out}
}

func (r *round) leave(p int) {
	if !r.known(p) || !r.live[p] {
		return
	}
	r.live[p] = false
	r.nLive--
	if !r.have[p] {
		r.missing--
	}
}

func (r *round) join(p int) {
	for len(r.live) <= p {
		r.live, r.have = append(r.live, false), append(r.have, false)
	}
	if r.live[p] {
		return
	}
	r.live[p] = true
	r.nLive++
	if !r.have[p] {
		r.missing++
	}
}

func (r *round) Version() uint64                      { return r.v }
func (r *round) Dropped() int64                       { return r.dropped }
func (r *round) Deadline() (time.Duration, bool)      { return 0, false }
func (r *round) Tick(now time.Duration) (bool, Apply) { return false, Apply{} }
