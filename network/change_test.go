package network

import (
	"strings"
	"testing"
	"time"
)

// degraded is gig divided by k from from to to (to 0: to the end).
func degraded(k float64, from, to time.Duration) Link {
	l := gig
	l.Degrade, l.From, l.To = k, from, to
	return l
}

// TestDegradeMidTransfer: a transfer of B bytes at r bytes/s whose link is
// divided by k at t0 ends at t0 + (B − r·t0)·k/r; when the window closes
// at t1 before that, the rest goes at r again; flows that share the link
// share its new rate; a worker's link that drops below its share keeps
// its own rate and leaves the rest to the others.
func TestDegradeMidTransfer(t *testing.T) {
	const b = 10000 // bytes; gig moves one a nanosecond
	us := time.Microsecond
	for _, c := range []struct {
		name    string
		s       Spec
		workers int
		want    []time.Duration // by worker, each pushing b into shard 0 at 0
	}{
		// 4000 bytes by 4µs, the other 6000 at 10⁸ B/s: 60µs more.
		{"shard ×10 from 4µs", Spec{Default: gig, Shards: map[int]Link{0: degraded(10, 4*us, 0)}}, 1, []time.Duration{64 * us}},
		// 4000 by 4µs, 600 more by 10µs, the other 5400 at 10⁹: 15.4µs.
		{"shard ×10 from 4µs to 10µs", Spec{Default: gig, Shards: map[int]Link{0: degraded(10, 4*us, 10*us)}}, 1, []time.Duration{15400 * time.Nanosecond}},
		// Two flows: 2000 each by 4µs, the other 8000 each at 5·10⁷.
		{"shared shard ×10", Spec{Default: gig, Shards: map[int]Link{0: degraded(10, 4*us, 0)}}, 2, []time.Duration{164 * us, 164 * us}},
		// The same, its uplink's side: every link degraded.
		{"every link ×10", Spec{Default: degraded(10, 4*us, 0)}, 2, []time.Duration{164 * us, 164 * us}},
		// Worker 0's link ×10 at 4µs: it runs at 10⁸ (2000 + 8000 in
		// 80µs), worker 1 takes the other 9·10⁸ (8000 in 8.89µs).
		{"worker ×10", Spec{Default: gig, Workers: map[int]Link{0: degraded(10, 4*us, 0)}}, 2, []time.Duration{84 * us, 12889 * time.Nanosecond}},
		// A window that closed before the transfer: no change.
		{"window past", Spec{Default: gig, Shards: map[int]Link{0: degraded(10, 0, 0)}}, 1, []time.Duration{100 * us}},
	} {
		n := mustNew(t, c.s, c.workers, 1)
		ids := make([]int32, c.workers)
		for p := range ids {
			ids[p] = n.Push(0, p, 0, b)
		}
		got := ends(t, n)
		for p, id := range ids {
			if got[id] != c.want[p] {
				t.Errorf("%s: worker %d's push ends at %s, want %s", c.name, p, got[id], c.want[p])
			}
		}
	}
}

// TestDegradeWithNothingInFlight: a change with no transfer in progress is
// no instant of Next (a caller would stop for nothing, or never see that
// the network is idle), and a transfer started after it runs at the new
// rate, and at the old one again after the window.
func TestDegradeWithNothingInFlight(t *testing.T) {
	us := time.Microsecond
	n := mustNew(t, Spec{Default: gig, Shards: map[int]Link{0: degraded(10, 4*us, 200*us)}}, 1, 1)
	if at, ok := n.Next(); ok {
		t.Fatalf("Next with nothing in flight: %s", at)
	}
	id := n.Push(10*us, 0, 0, 1000) // 1000 bytes at 10⁸: 10µs
	if got := ends(t, n)[id]; got != 20*us {
		t.Errorf("push in the window ends at %s, want 20µs", got)
	}
	if l := n.Shard(0); l.BusyIn != 10*us {
		t.Errorf("shard link busy %s for a push in the window, want 10µs (at its rate then)", l.BusyIn)
	}
	id = n.Push(300*us, 0, 0, 1000)
	if got := ends(t, n)[id]; got != 301*us {
		t.Errorf("push after the window ends at %s, want 301µs", got)
	}
}

// TestDegradeAgainstReference: random transfers on links with random
// windows end when the from-scratch reference, with the same rate
// changes, says they end.
func TestDegradeAgainstReference(t *testing.T) {
	rates := []float64{1e8, 1e9, 1e9, 2.5e9}
	factors := []float64{0.5, 2, 10, 100}
	rng := uint64(777)
	rnd := func(k int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(k))
	}
	changed := 0
	for trial := range 300 {
		workers, shards := 1+rnd(5), 1+rnd(3)
		s := Spec{Default: gig, Workers: map[int]Link{}, Shards: map[int]Link{}}
		var chs []refChange
		for _, o := range []struct {
			m     map[int]Link
			n     int
			links func(i int) (int, int)
		}{
			{s.Workers, workers, func(p int) (int, int) { return p, workers + p }},
			{s.Shards, shards, func(i int) (int, int) { return 2*workers + i, 2*workers + shards + i }},
		} {
			for i := range o.n {
				l := Link{Rate: rates[rnd(len(rates))], Latency: gig.Latency}
				if rnd(2) == 0 {
					l.Degrade = factors[rnd(len(factors))]
					l.From = time.Duration(rnd(20000)) * time.Nanosecond
					if rnd(3) > 0 {
						l.To = l.From + time.Duration(1+rnd(20000))*time.Nanosecond
					}
					up, down := o.links(i)
					for _, k := range []int{up, down} {
						chs = append(chs, refChange{l.From, k, l.Rate / l.Degrade})
						if l.To > 0 {
							chs = append(chs, refChange{l.To, k, l.Rate})
						}
					}
				}
				o.m[i] = l
			}
		}
		n := mustNew(t, s, workers, shards)
		ref := newRefNet(n)
		ref.changes = chs
		var now time.Duration
		var starts []refStart
		type who struct {
			push bool
			p, i int
		}
		var whos []who
		for range 1 + rnd(30) {
			now += time.Duration(rnd(3000)) * time.Nanosecond
			w := who{rnd(2) == 0, rnd(workers), rnd(shards)}
			a, b := w.p, 2*workers+shards+w.i
			if !w.push {
				a, b = 2*workers+w.i, workers+w.p
			}
			whos = append(whos, w)
			starts = append(starts, refStart{now, a, b, float64(100 + rnd(5000))})
		}
		got := map[int]time.Duration{}
		ids := map[int32]int{}
		k := 0
		for guard := 0; guard < 100000 && (k < len(starts) || len(ids) > 0); guard++ {
			at, ok := n.Next()
			if k < len(starts) && (!ok || starts[k].at < at) {
				w := whos[k]
				var id int32
				if w.push {
					id = n.Push(starts[k].at, w.p, w.i, int64(starts[k].bytes))
				} else {
					id = n.Pull(starts[k].at, w.i, w.p, int64(starts[k].bytes))
				}
				ids[id] = k
				k++
				continue
			}
			for _, id := range n.Done(at, nil) {
				got[ids[id]] = at
				delete(ids, id)
			}
		}
		if len(ids) > 0 || k < len(starts) {
			t.Fatalf("trial %d: transfers never ended", trial)
		}
		want := ref.run(starts)
		for j := range starts {
			// Each end and each change rounds to the nanosecond: the
			// others lag by as much, and a slowed flow's lag grows by
			// the factor (100 at most).
			if d, tol := got[j]-want[j], time.Duration(2*(len(starts)+len(chs)))*100; d < -tol || d > tol {
				t.Fatalf("trial %d (%d workers, %d shards, %+v): transfer %d %+v ends at %s, the reference says %s\n%+v", trial, workers, shards, s, j, starts[j], got[j], want[j], chs)
			}
		}
		if len(chs) > 0 {
			changed++
		}
	}
	if changed < 100 {
		t.Fatalf("only %d of 300 trials had a window", changed)
	}
}

// TestDegradeBadInput: every refusal names its field and builds nothing.
func TestDegradeBadInput(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"degrade=0,from=1s", "degrade"},
		{"degrade=-2,from=1s", "degrade"},
		{"degrade=NaN,from=1s", "degrade"},
		{"degrade=Inf,from=1s", "degrade"},
		{"degrade=1e9,from=1s", "degrade"},
		{"degrade=ten", "degrade"},
		{"degrade=10,from=2m,to=1m", "to="},
		{"degrade=10,from=2m,to=2m", "to="},
		{"degrade=10,from=-1s", "from="},
		{"degrade=10,from=soon", "from="},
		{"from=1s,to=2s", "without degrade"},
		{"rate=1Tbit,degrade=0.5", "1Tbit"},
	} {
		if l, err := ParseLink(c.in, DefaultLink); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseLink(%q) = %+v, %v; want an error saying %q", c.in, l, err, c.says)
		}
	}
	bad := gig
	bad.Degrade, bad.From, bad.To = 10, time.Second, time.Second
	if _, err := New(Spec{Default: gig, Shards: map[int]Link{0: bad}}, 1, 1); err == nil || !strings.Contains(err.Error(), "to=") {
		t.Errorf("a window ending where it starts: %v", err)
	}
	if _, err := ParseSpec("", nil, []string{"4:degrade=10,from=1s"}, 0); err != nil {
		t.Fatal(err)
	} else if s, _ := ParseSpec("", nil, []string{"4:degrade=10,from=1s"}, 0); func() error { _, err := New(s, 2, 4); return err }() == nil {
		t.Error("a window on shard 4 of a job of 4 shards accepted")
	}
}

// TestDegradeRoundTrip: a window writes back as it reads, in a link and
// in a spec's overrides, and At gives the links as they are at a time.
func TestDegradeRoundTrip(t *testing.T) {
	for _, in := range []string{"rate=10Gbit,latency=50µs,degrade=10,from=3m0s,to=6m0s", "rate=1Gbit,latency=1ms,degrade=2.5,from=0s"} {
		l, err := ParseLink(in, DefaultLink)
		if err != nil || l.String() != in {
			t.Errorf("%q reads as %+v (%v), writes as %q", in, l, err, l.String())
		}
	}
	s, err := ParseSpec("", nil, []string{"0:degrade=10,from=180s,to=360s"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); !strings.Contains(got, "shard 0 rate=10Gbit,latency=50µs,degrade=10,from=3m0s,to=6m0s") {
		t.Errorf("String: %q", got)
	}
	if !s.Changes() {
		t.Error("Changes false for a spec with a window")
	}
	back, err := ParseSpec(s.Default.String(), nil, Overrides(s.Shards), 0)
	if err != nil || back.Shards[0] != s.Shards[0] {
		t.Errorf("overrides read back as %+v, %v", back.Shards, err)
	}
	for _, c := range []struct {
		at   time.Duration
		rate float64
	}{{179 * time.Second, DefaultLink.Rate}, {180 * time.Second, DefaultLink.Rate / 10}, {360 * time.Second, DefaultLink.Rate}} {
		a := s.At(c.at)
		if l := a.Shards[0]; l.Rate != c.rate || l.Changes() || a.Changes() {
			t.Errorf("At(%s): shard 0 %+v, want rate %g and no window", c.at, l, c.rate)
		}
	}
	if s.Shards[0].Degrade != 10 {
		t.Error("At changed the spec it was called on")
	}
}
