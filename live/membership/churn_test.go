package membership

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// TestChurnStaysWithinCap: recycled join ids are keyed by incarnation
// (DECISIONS "[Right after First]"), and that never widens what the
// shards are asked to accept. Many more processes than ids join, stop
// (killed, or silent long enough to be removed) and come back asking for
// the id they had, in a seeded random order; after every step the job has
// at most IDCap ids, every id admitted is below it, no process holds two
// ids (the shards key a data connection by id: live/bounds.go counts one
// push in flight per id), and a process is refused only for want of a
// free id (unavailable), never told to start again: a stale one is given
// a fresh id.
func TestChurnStaysWithinCap(t *testing.T) {
	const k, idCap, steps = 2, 6, 20_000
	cfg := Config{Workers: k, IDCap: idCap, Timeout: time.Second, Grace: 2 * time.Second, Every: 125 * time.Millisecond, Target: 1 << 40}
	t0 := time.Unix(1_000_000, 0)
	tab := New(cfg, t0)
	type proc struct {
		inc        uint64
		id         int  // the id it has or asks for (−1: a join's first Hello)
		admitted   bool // its last Hello was taken
		alive      bool
		seq, acked uint64
	}
	rng := rand.New(rand.NewPCG(37, 5))
	var procs []*proc
	now, nextSweep := t0, t0
	fresh, refused := 0, 0
	hello := func(p *proc) {
		a, err := tab.Hello(now, p.id, Process{Inc: p.inc, Seq: p.seq, Acked: p.acked})
		var r *Refusal
		switch {
		case errors.As(err, &r) && r.Code == Unavailable:
			refused++
			p.admitted = false
			return
		case err != nil:
			t.Fatalf("process %d asking for id %d refused: %v", p.inc, p.id, err)
		case a.ID < 0 || a.ID >= idCap:
			t.Fatalf("process %d admitted as %d, outside [0, %d)", p.inc, a.ID, idCap)
		}
		if a.Fresh {
			fresh++
		}
		p.id, p.admitted = a.ID, true
	}
	for step := range steps {
		now = now.Add(50 * time.Millisecond)
		switch x := rng.IntN(100); {
		case x < 1: // a new worker joins
			p := &proc{inc: uint64(len(procs) + 1), id: -1, alive: true}
			procs = append(procs, p)
			hello(p)
		case x < 4 && len(procs) > 0: // one stops (killed, or stopped and later let go)
			procs[rng.IntN(len(procs))].alive = false
		case x < 8 && len(procs) > 0: // a stopped one comes back, under the id it had
			if p := procs[rng.IntN(len(procs))]; !p.alive {
				p.alive = true
				hello(p)
			}
		}
		for _, p := range procs {
			if !p.alive {
				continue
			}
			if !p.admitted {
				if rng.IntN(10) == 0 {
					hello(p) // refused for want of an id: it retries
				}
				continue
			}
			tab.Heartbeat(now, p.id)
			if rng.IntN(4) == 0 && tab.Member(p.id).Inc == p.inc {
				p.seq++
				if _, err := tab.Clock(now, p.id, p.seq); err != nil {
					t.Fatalf("step %d: process %d's report %d under id %d: %v", step, p.inc, p.seq, p.id, err)
				}
				p.acked = p.seq
			}
		}
		if !now.Before(nextSweep) {
			tab.Sweep(now)
			nextSweep = now.Add(cfg.Every)
		}
		if tab.Len() > idCap {
			t.Fatalf("step %d: %d ids, above the cap of %d", step, tab.Len(), idCap)
		}
		holder := map[uint64]int{}
		for id := range tab.Len() {
			if inc := tab.Member(id).Inc; inc != 0 {
				if other, ok := holder[inc]; ok {
					t.Fatalf("step %d: process %d holds ids %d and %d", step, inc, other, id)
				}
				holder[inc] = id
			}
		}
	}
	t.Logf("%d processes through %d ids: %d given a fresh id, %d Hellos refused for want of one", len(procs), idCap, fresh, refused)
	if fresh == 0 {
		t.Error("no process was given a fresh id: the churn does not reach the rule")
	}
}
