package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// scenario draws a random cluster: size, speeds, jitter, stragglers, server
// delays and sometimes a failure.
func scenario(seed uint64, spec string) Config {
	rng := rand.New(rand.NewPCG(seed, 99))
	k := 2 + rng.IntN(9)
	speeds := make([]float64, 1+rng.IntN(3))
	for i := range speeds {
		speeds[i] = 0.5 + 2*rng.Float64()
	}
	sp, err := paradigm.Parse(spec)
	if err != nil {
		panic(err)
	}
	cfg := Config{Spec: sp, Workers: k, Shards: 1 + rng.IntN(3), Seed: seed, Iterations: 30,
		Timing: timing.WorkerSpec{Speeds: speeds, Jitter: 0.3 * rng.Float64()}}
	if rng.IntN(3) == 0 {
		cfg.ServerDelay = timing.MustServerDelay("spike:p=0.05,delay=3s")
	}
	if rng.IntN(4) == 0 {
		cfg.Timing.Straggler = timing.MustStraggler("heavytail")
	}
	if rng.IntN(3) == 0 {
		cfg.Failures = []Failure{{Worker: rng.IntN(k), At: time.Duration(1+rng.IntN(20)) * time.Second}}
	}
	// Half the scenarios have a network (drawn last, so the draws above
	// are those of the scenarios before it existed): links from 100 Mbit/s
	// to 25 Gbit/s, latencies to 5 ms, models of 10³–10⁷ values (a
	// transfer from microseconds to seconds against iterations of about
	// a second), sometimes one slow worker or shard link.
	if rng.IntN(2) == 0 {
		link := func() network.Link {
			return network.Link{Rate: 12.5e6 * math.Pow(250, rng.Float64()), Latency: time.Duration(1+rng.IntN(5000)) * time.Microsecond}
		}
		n := &network.Spec{Default: link(), ApplyRate: []float64{0, 1e8, 2e9}[rng.IntN(3)]}
		if rng.IntN(3) == 0 {
			n.Workers = map[int]network.Link{rng.IntN(k): link()}
		}
		if rng.IntN(3) == 0 {
			n.Shards = map[int]network.Link{rng.IntN(cfg.Shards): link()}
		}
		cfg.Network, cfg.Params = n, int(math.Pow(10, 3+4*rng.Float64()))
	}
	return cfg
}

const seeds = 150

func runTraced(t *testing.T, cfg Config, check func(Event)) {
	t.Helper()
	cfg.Trace = check
	if _, err := Run(cfg); err != nil {
		t.Fatalf("seed %d %s: %v", cfg.Seed, cfg.Spec, err)
	}
}

// §3: at every release, t_p − min t ≤ s.
func TestSSPInvariant(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		s := int64(seed % 5)
		cfg := scenario(seed, fmt.Sprintf("ssp:s=%d", s))
		runTraced(t, cfg, func(e Event) {
			if e.Kind == Release && e.Clock-e.Min > s {
				t.Fatalf("seed %d: SSP(%d) released worker %d at clock %d with min %d", seed, s, e.Worker, e.Clock, e.Min)
			}
		})
	}
}

// §4 bounded mode: never more than s_U ahead at a release, whichever the
// wait rule and interval measure.
func TestBoundedDSSPInvariant(t *testing.T) {
	opts := []string{"", ",wait=sl", ",interval=push", ",wait=sl,interval=push"}
	for seed := uint64(1); seed <= seeds; seed++ {
		sl := int64(seed % 3)
		su := sl + int64(seed%7)
		opt := opts[seed%4]
		cfg := scenario(seed, fmt.Sprintf("dssp:sl=%d,su=%d,mode=bounded%s", sl, su, opt))
		runTraced(t, cfg, func(e Event) {
			if e.Kind == Release && e.Clock-e.Min > su {
				t.Fatalf("seed %d: bounded DSSP%s released at gap %d > s_U=%d", seed, opt, e.Clock-e.Min, su)
			}
		})
	}
}

// §4 wait=sl (line 17 as printed): a held worker is released only once it
// is back within s_L of the slowest; the pusher's own release may come from
// a grant. Under wait=next a held worker waits for the slowest worker's next
// push and then decides again, so that push may grant it further.
func TestDSSPWaitSLInvariant(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		sl := int64(seed % 4)
		spec := fmt.Sprintf("dssp:sl=%d,su=%d,wait=sl", sl, sl+3+int64(seed%9))
		cfg := scenario(seed, spec)
		pusher := -1
		runTraced(t, cfg, func(e Event) {
			switch e.Kind {
			case Push:
				pusher = e.Worker
			case Remove:
				pusher = -1
			case Release:
				if e.Worker != pusher && e.Clock-e.Min > sl {
					t.Fatalf("seed %d: %s released held worker %d at gap %d", seed, spec, e.Worker, e.Clock-e.Min)
				}
			}
		})
	}
}

// §1: BSP releases only when every live clock is equal, and every update
// holds one gradient from each live worker.
func TestBSPInvariant(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := scenario(seed, "bsp")
		runTraced(t, cfg, func(e Event) {
			if e.Kind == Release && e.Clock != e.Min {
				t.Fatalf("seed %d: BSP released worker %d at clock %d with min %d", seed, e.Worker, e.Clock, e.Min)
			}
		})
	}
}

// §6: exactly N gradients per version (N = K − b, or every live worker when
// fewer remain), the rest dropped.
func TestBackupInvariant(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := scenario(seed, "bsp")
		b := int(seed) % cfg.Workers
		sp, _ := paradigm.Parse(fmt.Sprintf("backup:b=%d", b))
		cfg.Spec = sp
		n := cfg.Workers - b
		var arrived, accepted, drops int
		runTraced(t, cfg, func(e Event) {
			switch e.Kind {
			case Update:
				accepted += e.N
				if want := min(n, e.Live); e.N != want {
					t.Fatalf("seed %d: backup b=%d applied %d gradients, want N=%d (live %d)", seed, b, e.N, want, e.Live)
				}
			case Drop:
				drops++
			case Arrive:
				arrived++
			}
		})
		if drops == 0 && b > 0 && len(cfg.Failures) == 0 {
			t.Errorf("seed %d: b=%d backups but nothing dropped", seed, b)
		}
		// Every block that reaches a shard was applied, dropped, or is
		// still buffered (a push is a block to every shard; with a network
		// the last ones may still be on the wire when the run ends).
		if buffered := arrived - accepted - drops; buffered < 0 || buffered > cfg.Shards*n {
			t.Errorf("seed %d: %d blocks arrived at %d shards, %d applied, %d dropped", seed, arrived, cfg.Shards, accepted, drops)
		}
	}
}

// §7: never fewer than c gradients unless fewer than c workers are alive.
func TestPSPInvariant(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := scenario(seed, "bsp")
		c := 1 + int(seed)%cfg.Workers
		sp, _ := paradigm.Parse(fmt.Sprintf("psp:c=%d,b=0.6,t1=200ms,t2=100ms", c))
		cfg.Spec = sp
		runTraced(t, cfg, func(e Event) {
			if e.Kind == Update && e.N < c && e.Live >= c {
				t.Fatalf("seed %d: PSP c=%d applied %d gradients with %d workers alive", seed, c, e.N, e.Live)
			}
		})
	}
}

// §5 local-only: a shard applies only at barriers, and then every block
// that has reached it (every live worker is held at a barrier, so none is
// in flight; with a network a worker that died may have landed a block
// its clock report never followed); a worker computes either on every
// block fresh (after a barrier) or on none (inside a superstep, from its
// own copy).
func TestElasticLocalOnlyInvariant(t *testing.T) {
	localTotal := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := scenario(seed, "elastic:r=6,apply=local")
		local := 0
		applied := make([]int, cfg.Shards)
		arrived := make([]int, cfg.Shards)
		version := make([]uint64, cfg.Shards)
		runTraced(t, cfg, func(e Event) {
			switch e.Kind {
			case Arrive:
				arrived[e.Shard]++
			case Update:
				applied[e.Shard] += e.N
				if version[e.Shard]++; e.Version != version[e.Shard] {
					t.Fatalf("seed %d: shard %d went to version %d after %d", seed, e.Shard, e.Version, version[e.Shard]-1)
				}
				if applied[e.Shard] != arrived[e.Shard] {
					t.Fatalf("seed %d: shard %d applied %d of the %d blocks it had at a barrier", seed, e.Shard, applied[e.Shard], arrived[e.Shard])
				}
			case Compute:
				if e.Fresh != 0 && e.Fresh != cfg.Shards {
					t.Fatalf("seed %d: worker %d computed on %d of %d fresh blocks", seed, e.Worker, e.Fresh, cfg.Shards)
				}
				if e.Fresh == 0 {
					local++
				}
			}
		})
		if version[0] == 0 {
			t.Fatalf("seed %d: no barrier in %d blocks", seed, arrived[0])
		}
		// The stop applies the open superstep: no gradient is lost.
		for i, n := range applied {
			if n != arrived[i] {
				t.Fatalf("seed %d: shard %d applied %d of its %d blocks by the end", seed, i, n, arrived[i])
			}
		}
		localTotal += local
	}
	if localTotal == 0 {
		t.Fatal("no worker ever computed from its own copy: every superstep was one push")
	}
}

// Common rules: no paradigm waits forever for a dead worker.
func TestNoParadigmStallsOnAFailure(t *testing.T) {
	specs := []string{"bsp", "asp", "ssp:s=2", "dssp:sl=1,su=6", "dssp:sl=1,su=6,mode=bounded", "dssp:sl=1,su=6,wait=sl",
		"elastic:r=8", "elastic:r=8,apply=local", "backup:b=1", "backup:b=1,set=shared", "psp:c=3,b=0.5,t1=100ms", "softsync:n=2", "delay:d=3"}
	for _, s := range specs {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := scenario(seed, s)
			if cfg.Workers < 4 {
				cfg.Workers = 4
			}
			cfg.Failures = []Failure{{Worker: int(seed) % cfg.Workers, At: 3 * time.Second},
				{Worker: (int(seed) + 1) % cfg.Workers, At: 7 * time.Second}}
			cfg.Iterations = 40
			r, err := Run(cfg)
			if err != nil {
				t.Fatalf("%s seed %d: %v", s, seed, err)
			}
			if r.Pushes < int64(cfg.Workers*cfg.Iterations) {
				t.Fatalf("%s seed %d: only %d pushes", s, seed, r.Pushes)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, s := range []string{"dssp:sl=3,su=15", "dssp:sl=3,su=15,wait=sl,interval=push", "elastic:r=15", "elastic:r=15,apply=local", "psp:c=3,b=0.5,t2=1s", "softsync:n=3", "delay:d=3"} {
		cfg := scenario(7, s)
		a, err1 := Run(cfg)
		b, err2 := Run(cfg)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", s, err1, err2)
		}
		// The summary as it is written (a run's pointers, such as its time
		// split with a network, print as addresses with %+v).
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if a.ControllerSeconds != b.ControllerSeconds || string(ja) != string(jb) {
			t.Fatalf("%s: two runs differ:\n%s\n%s", s, ja, jb)
		}
	}
}

// PSP with partial pull and no delays: every shard answers at the same
// instant, so a worker must compute with all blocks fresh, not with the first
// ⌈b·S⌉ (a worker deciding mid-instant once kept the last shards' blocks one
// version stale forever).
func TestPSPPartialPullSeesSimultaneousAnswers(t *testing.T) {
	sp, _ := paradigm.Parse("psp:c=6,b=0.7")
	cfg := Config{Spec: sp, Workers: 6, Shards: 10, Iterations: 30, Seed: 4, Timing: timing.WorkerSpec{Jitter: 0.1}}
	stale := 0
	runTraced(t, cfg, func(e Event) {
		if e.Kind == Compute && e.Fresh != cfg.Shards {
			stale++
		}
	})
	if stale > 0 {
		t.Fatalf("%d computes started with some blocks stale although no response was delayed", stale)
	}
	// With delays, partial pull does start early: that is its point.
	cfg.ServerDelay = timing.MustServerDelay("spike:p=0.05,delay=3s")
	partial := 0
	runTraced(t, cfg, func(e Event) {
		if e.Kind == Compute && e.Fresh < cfg.Shards {
			partial++
		}
	})
	if partial == 0 {
		t.Fatal("no compute started on part of the blocks despite delayed responses")
	}
}

// The controller's wall time is measured when a clock is given, and it
// changes nothing in the summary.json (which must be the same for a seed).
func TestControllerTimeMeasuredOutsideTheSummary(t *testing.T) {
	for _, s := range []string{"dssp:sl=1,su=8", "elastic:r=15"} {
		cfg := scenario(11, s)
		cfg.Iterations = 200
		plain, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Clock = time.Now
		timed, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(plain)
		b, _ := json.Marshal(timed)
		if string(a) != string(b) || plain.ControllerSeconds != 0 {
			t.Fatalf("%s: measuring changed the summary", s)
		}
		if timed.ControllerCalls == 0 || timed.ControllerSeconds <= 0 {
			t.Fatalf("%s: %d controller calls took %v s", s, timed.ControllerCalls, timed.ControllerSeconds)
		}
	}
}
