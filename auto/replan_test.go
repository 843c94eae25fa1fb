package auto

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
)

// TestAutoFollowsTheTransientStraggler: the simulator under auto on the
// transient preset's cluster (8 workers, worker 7 four times as slow from
// 180 s to 360 s): it starts under BSP, leaves it once the slowdown shows
// in a window, comes back after the recovery, and pushes more than BSP
// alone. The same seed gives the same decisions. At a 5% threshold: the
// way back gains 8.6% in this (linear) measure, under the default 15%.
func TestAutoFollowsTheTransientStraggler(t *testing.T) {
	run := func(spec string) *runstats.Run {
		t.Helper()
		sp, err := paradigm.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		c := sim.Config{Spec: sp, Workers: 8, Duration: 600 * time.Second, Seed: 1,
			Timing: timing.WorkerSpec{Jitter: 0.05, Straggler: timing.MustStraggler("slow:worker=7,factor=4,from=180,to=360")}}
		Configure(&c)
		r, err := sim.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b, bsp := run("auto:threshold=0.05"), run("auto:threshold=0.05"), run("bsp")
	var switches []float64
	var left, back bool
	for _, d := range a.Decisions {
		if !d.Switch {
			continue
		}
		switches = append(switches, d.AtSeconds)
		left = left || d.Current == "bsp" && d.AtSeconds > 180 && d.AtSeconds < 360
		back = back || d.Best == "bsp" && d.AtSeconds > 360
	}
	if !left || !back {
		t.Errorf("switches at %v s (%+v): want one away from bsp inside the slowdown and one back after it", switches, a.Decisions)
	}
	if a.Throughput <= bsp.Throughput {
		t.Errorf("auto %.2f pushes/s, bsp %.2f", a.Throughput, bsp.Throughput)
	}
	if len(a.Decisions) != len(b.Decisions) || a.Throughput != b.Throughput {
		t.Errorf("two runs of one seed differ: %d and %d decisions, %v and %v pushes/s", len(a.Decisions), len(b.Decisions), a.Throughput, b.Throughput)
	}
}

// TestReplanSeesTheLinksAsTheyAre: a decision inside a link's window
// predicts on the link as it is then (the prediction's own time starts at
// 0, where the window would not yet have begun): the same plan as on a
// link at that rate for good, and another than on the undegraded link.
func TestReplanSeesTheLinksAsTheyAre(t *testing.T) {
	sp, err := paradigm.Parse("auto:lambda=0")
	if err != nil {
		t.Fatal(err)
	}
	bsp, err := paradigm.Parse("bsp")
	if err != nil {
		t.Fatal(err)
	}
	link := network.Link{Rate: 1e9, Latency: 50 * time.Microsecond}
	slow, window := link, link
	slow.Rate /= 10
	window.Degrade, window.From, window.To = 10, 20*time.Second, 40*time.Second
	plan := func(shard network.Link, now time.Duration) sim.Plan {
		c := sim.Config{Spec: sp, Workers: 8, Shards: 1, Seed: 1, Params: 1 << 20,
			Network: &network.Spec{Default: link, Shards: map[int]network.Link{0: shard}}}
		Configure(&c)
		w := sim.Window{Iter: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond,
			10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond}, CV: 0.05}
		p, err := c.Replan(now, w, bsp)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	in, held, fast := plan(window, 30*time.Second), plan(slow, 30*time.Second), plan(link, 30*time.Second)
	if in.Gain != held.Gain || in.Best != held.Best {
		t.Errorf("in the window: %+v; on the link slowed for good: %+v", in, held)
	}
	if in.Gain == fast.Gain {
		t.Errorf("in the window the plan is the undegraded link's (%+v): the window was not seen", fast)
	}
	if after := plan(window, 50*time.Second); after.Gain != plan(link, 50*time.Second).Gain {
		t.Errorf("after the window: %+v, not the undegraded link's", after)
	}
}
