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
		"elastic:r=4", "backup:b=1", "psp:c=2,b=0.5,t1=5ms,t2=5ms", "softsync:n=2"} {
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
	for _, s := range []string{"backup:b=1,set=shared", "elastic:r=4,apply=local"} {
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
