// Claim: delay:d=N (docs/paradigms.md "Fixed staleness", the backup-workers
// paper's §2.1) applies every gradient computed on version v as the update
// of version v+N when one worker trains (θ ← θ − α·∇F(θ at max(0, t−N)),
// the paper's simulated staleness with its warm-up), adds exactly N to the
// staleness asynchrony gives when K workers do, never holds a worker, and
// with N = 0 is ASP.

package paradigm

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// One worker: update u is the gradient computed on version max(0, u−d), on
// every shard.
func TestDelayOneWorkerUpdateOfVersionVPlusD(t *testing.T) {
	for _, d := range []int{0, 1, 5, 20} {
		pol, err := New(Spec{Kind: Delay, D: d}, Config{Workers: 1, Shards: 3})
		if err != nil {
			t.Fatal(err)
		}
		read := make([]uint64, 3)
		readOf := map[uint64]uint64{} // gradient id → the version it was computed on (shard 0)
		applies := 0
		for id := uint64(1); id <= 200; id++ {
			readOf[id] = read[0]
			for i, a := range pol.Aggs {
				_, applied, ap := a.Push(0, Grad{ID: id, Worker: 0, Read: read[i]})
				if !applied {
					continue
				}
				u := ap.Version - 1 // the update of version u makes u+1
				want := uint64(max(0, int(u)-d))
				if len(ap.Grads) != 1 || readOf[ap.Grads[0].ID] != want || ap.Grads[0].Staleness != int64(u-want) || ap.Grads[0].Weight != 1 {
					t.Fatalf("d=%d shard %d: update of version %d is %+v (read at %d), want one gradient computed on %d",
						d, i, u, ap.Grads, readOf[ap.Grads[0].ID], want)
				}
				if i == 0 {
					applies++
				}
			}
			if rd := pol.Pushed(0, 0); len(rd.Released) != 1 {
				t.Fatalf("d=%d: push %d released %v: the worker waited", d, id, rd.Released)
			}
			for i, a := range pol.Aggs {
				read[i] = a.Version()
			}
		}
		if applies != 200-d {
			t.Errorf("d=%d: %d updates from 200 pushes, want %d (the line holds d)", d, applies, 200-d)
		}
	}
}

// K workers in a random order: a gradient that finds the line full is
// applied d updates after the version at its arrival, so its staleness is
// d plus the updates made while it was computed. Nobody is ever held.
func TestDelayAddsDToAsynchrony(t *testing.T) {
	const k, d = 4, 3
	pol, err := New(Spec{Kind: Delay, D: d}, Config{Workers: k, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := pol.Aggs[0]
	read := make([]uint64, k)
	atArrival := map[uint64]uint64{} // id → shard version when it arrived
	full := map[uint64]bool{}        // id → the line was full when it arrived
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for id := uint64(1); id <= 500; id++ {
		p := rng.IntN(k)
		atArrival[id], full[id] = a.Version(), id > d
		_, applied, ap := a.Push(0, Grad{ID: id, Worker: p, Read: read[p]})
		if applied {
			c := ap.Grads[0]
			if full[c.ID] {
				if got := ap.Version - 1; got != atArrival[c.ID]+d {
					t.Fatalf("gradient %d arrived at version %d and was applied at %d, want %d", c.ID, atArrival[c.ID], got, atArrival[c.ID]+d)
				}
				if c.Staleness < d {
					t.Fatalf("gradient %d: staleness %d below d=%d", c.ID, c.Staleness, d)
				}
				checked++
			}
		}
		if rd := pol.Pushed(time.Duration(id), p); len(rd.Released) != 1 || rd.Released[0] != p {
			t.Fatalf("push %d of worker %d released %v", id, p, rd.Released)
		}
		read[p] = a.Version()
	}
	if checked < 400 {
		t.Fatalf("only %d applies checked", checked)
	}
}

// d = 0 decides as ASP on the same pushes.
func TestDelayZeroIsASP(t *testing.T) {
	cfg := Config{Workers: 3, Shards: 2}
	asp, _ := New(Spec{Kind: ASP}, cfg)
	d0, _ := New(Spec{Kind: Delay}, cfg)
	rng := rand.New(rand.NewPCG(7, 8))
	for id := uint64(1); id <= 300; id++ {
		p := rng.IntN(cfg.Workers)
		for i := range cfg.Shards {
			g := Grad{ID: id, Worker: p, Read: asp.Aggs[i].Version() - uint64(rng.IntN(int(min(3, asp.Aggs[i].Version()+1))))}
			aok, aapp, aap := asp.Aggs[i].Push(0, g)
			dok, dapp, dap := d0.Aggs[i].Push(0, g)
			if aok != dok || aapp != dapp || !reflect.DeepEqual(aap, dap) {
				t.Fatalf("push %d shard %d: delay:d=0 gave %v %v %+v, asp %v %v %+v", id, i, dok, dapp, dap, aok, aapp, aap)
			}
		}
		if a, b := asp.Pushed(0, p).Released, d0.Pushed(0, p).Released; !reflect.DeepEqual(a, b) {
			t.Fatalf("push %d: releases %v, asp %v", id, b, a)
		}
	}
}
