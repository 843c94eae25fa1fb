package paradigm

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// Each piece built alone decides exactly as the same piece of New's Policy:
// the same random pushes, leaves and joins give the same releases, the same
// accepts, drops and applies, and the same pull rule.
func TestPiecesDecideAsTheWholePolicy(t *testing.T) {
	cfg := Config{Workers: 4, Shards: 2}
	for _, s := range []string{"bsp", "bsp:agg=sum", "asp", "ssp:s=2", "dssp:sl=1,su=5", "dssp:sl=1,su=5,wait=sl,mode=bounded",
		"elastic:r=4", "backup:b=1", "psp:c=2,b=0.5,t1=5ms,t2=5ms", "softsync:n=2", "delay:d=3", "elastic:r=4,interval=mean:3"} {
		sp, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := New(sp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		gate, err := NewGate(sp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		agg, err := NewAggregator(sp, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := NewPuller(sp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, uint64(len(s))))
		live := []bool{true, true, true, true}
		applies := 0
		for step := 0; step < 400; step++ {
			now := time.Duration(step) * time.Millisecond
			p := rng.IntN(cfg.Workers)
			var want, got []int
			switch {
			case rng.IntN(30) == 0 && live[p]:
				live[p] = false
				want = pol.Gate.Leave(now, p, nil)
				got = gate.Leave(now, p, nil)
				wa, wap := pol.Aggs[1].Leave(now, p)
				ga, gap := agg.Leave(now, p)
				if wa != ga || !reflect.DeepEqual(wap, gap) {
					t.Fatalf("%s step %d: leave applies %v %+v, whole policy %v %+v", s, step, ga, gap, wa, wap)
				}
			case !live[p]:
				live[p] = true
				want = pol.Gate.Join(now, p, nil)
				got = gate.Join(now, p, nil)
				pol.Aggs[1].Join(now, p)
				agg.Join(now, p)
			case !pol.Gate.Held(p):
				read := agg.Version()
				if read > 0 && rng.IntN(2) == 0 {
					read-- // a stale gradient: dropped or down-weighted
				}
				g := Grad{ID: uint64(step), Worker: p, Read: read, Clock: read}
				wok, wa, wap := pol.Aggs[1].Push(now, g)
				gok, ga, gap := agg.Push(now, g)
				if wok != gok || wa != ga || !reflect.DeepEqual(wap, gap) {
					t.Fatalf("%s step %d: push %v %v %+v, whole policy %v %v %+v", s, step, gok, ga, gap, wok, wa, wap)
				}
				if ga {
					applies++
				}
				want = pol.Gate.Pushed(now, p, nil)
				got = gate.Pushed(now, p, nil)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s step %d: the gate released %v, the whole policy's %v", s, step, got, want)
			}
			wa, wap := pol.Aggs[1].Tick(now)
			if ga, gap := agg.Tick(now); wa != ga || !reflect.DeepEqual(wap, gap) {
				t.Fatalf("%s step %d: tick %v %+v, whole policy %v %+v", s, step, ga, gap, wa, wap)
			}
		}
		if applies == 0 {
			t.Fatalf("%s: the aggregator never applied: the test compared nothing", s)
		}
		read := []uint64{3, 5}
		pl.Start(0, 4, read, false)
		pol.Pullers[2].Start(0, 4, read, false)
		for i := range read {
			if pl.MinVersion(i) != pol.Pullers[2].MinVersion(i) || pl.Need() != pol.Pullers[2].Need() {
				t.Fatalf("%s: puller asks shard %d for v ≥ %d of %d blocks, whole policy's for v ≥ %d of %d",
					s, i, pl.MinVersion(i), pl.Need(), pol.Pullers[2].MinVersion(i), pol.Pullers[2].Need())
			}
		}
	}
}

// The options that tie pieces together are refused piecewise, naming the
// way that works; a shard index outside the job is refused.
func TestPiecesRefuse(t *testing.T) {
	cfg := Config{Workers: 3, Shards: 2}
	for _, s := range []string{"backup:b=1,set=shared"} {
		sp, _ := Parse(s)
		if _, err := NewAggregator(sp, cfg, 0); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: aggregator: %v", s, err)
		}
		if _, err := NewPuller(sp, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: puller: %v", s, err)
		}
		if _, err := NewGate(sp, cfg); err != nil {
			t.Errorf("%s: the gate alone is fine: %v", s, err)
		}
	}
	for _, i := range []int{-1, 2} {
		if _, err := NewAggregator(Spec{Kind: BSP}, cfg, i); !errors.Is(err, ErrConfig) {
			t.Errorf("shard %d: %v", i, err)
		}
	}
	if _, err := NewGate(Spec{Kind: Backup, B: 3}, cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("backup b = workers: %v", err)
	}
}

// ElasticBSP apply=local built piecewise decides as the whole Policy when
// the driver carries the barrier count: the gate's count (Barriers) is the
// Policy's, a shard's Superstep applies at each barrier exactly the
// Policy's apply, and a worker's puller told the count with its release
// computes locally inside a superstep and pulls the barrier's version
// after one, as the Policy's puller does.
func TestLocalOnlyPiecesDecideAsTheWholePolicy(t *testing.T) {
	cfg := Config{Workers: 3, Shards: 2}
	sp, err := Parse("elastic:r=4,apply=local")
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := New(sp, cfg)
	gate, _ := NewGate(sp, cfg)
	agg, err := NewAggregator(sp, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ss, ok := agg.(Superstep)
	if !ok {
		t.Fatalf("apply=local's aggregator is a %T, not a Superstep", agg)
	}
	pl, err := NewPuller(sp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	read := []uint64{0, 0}
	clock, barriers, locals := uint64(0), 0, 0
	pl.Start(0, 0, read, true)
	pol.Pullers[0].Start(0, 0, read, true)
	for step := 0; step < 300; step++ {
		now := time.Duration(step) * time.Millisecond * time.Duration(1+rng.IntN(3))
		p := rng.IntN(cfg.Workers)
		if pol.Gate.Held(p) {
			continue
		}
		g := Grad{ID: uint64(step), Worker: p, Read: agg.Version(), Clock: 0}
		pol.Aggs[1].Push(now, g)
		if ok, applied, _ := agg.Push(now, g); !ok || applied {
			t.Fatalf("step %d: a superstep's push was accepted %v, applied %v: want buffered", step, ok, applied)
		}
		rd := pol.Pushed(now, p)
		got := gate.Pushed(now, p, nil)
		if !slices.Equal(got, rd.Released) || Barriers(gate) != *pol.steps {
			t.Fatalf("step %d: released %v after %d barriers, the whole policy %v after %d", step, got, Barriers(gate), rd.Released, *pol.steps)
		}
		for _, a := range rd.Applies {
			if a.Shard != 1 {
				continue
			}
			barriers++
			if b := ss.Barrier(); !reflect.DeepEqual(b, a.Apply) {
				t.Fatalf("step %d: barrier applies %+v, the whole policy %+v", step, b, a.Apply)
			}
		}
		if p == 0 && slices.Contains(got, 0) {
			// Worker 0 released: its next pull, by the count the release carries.
			pl.SetBarriers(Barriers(gate))
			pl.Start(now, clock, read, false)
			pol.Pullers[0].Start(now, clock, read, false)
			if pl.Ready() != pol.Pullers[0].Ready() || pl.MinVersion(1) != pol.Pullers[0].MinVersion(1) {
				t.Fatalf("step %d: puller ready %v (v ≥ %d), the whole policy's %v (v ≥ %d)", step, pl.Ready(), pl.MinVersion(1),
					pol.Pullers[0].Ready(), pol.Pullers[0].MinVersion(1))
			}
			if pl.Ready() {
				locals++
			}
			clock++
		}
	}
	if barriers < 3 || locals == 0 || agg.Version() != uint64(barriers) {
		t.Fatalf("%d barriers (shard version %d), %d local steps: the test compared too little", barriers, agg.Version(), locals)
	}
	pl.SetBarriers(1) // an older count changes nothing
	pl.Start(0, clock, read, false)
	if !pl.Ready() {
		t.Error("an older barrier count made the puller pull")
	}
}
