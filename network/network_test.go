package network

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A link of 10⁹ bytes per second: one byte a nanosecond, so the times
// below are exact.
var gig = Link{Rate: 1e9, Latency: 5 * time.Microsecond}

func mustNew(t *testing.T, s Spec, workers, shards int) *Net {
	t.Helper()
	n, err := New(s, workers, shards)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ends runs n's transfers in progress to their ends and returns each one's
// end by id.
func ends(t *testing.T, n *Net) map[int32]time.Duration {
	t.Helper()
	out := map[int32]time.Duration{}
	for range 100000 {
		at, ok := n.Next()
		if !ok {
			return out
		}
		for _, id := range n.Done(at, nil) {
			out[id] = at
		}
	}
	t.Fatal("transfers never end")
	return nil
}

// TestOneTransfer: bytes/rate through both links; the latency is the
// caller's to add.
func TestOneTransfer(t *testing.T) {
	n := mustNew(t, Spec{Default: gig}, 1, 1)
	id := n.Push(0, 0, 0, 1000)
	if got := ends(t, n)[id]; got != 1000*time.Nanosecond {
		t.Errorf("push ends at %s, want 1µs", got)
	}
	if got, want := n.Latency(0, 0), 10*time.Microsecond; got != want {
		t.Errorf("path latency %s, want %s", got, want)
	}
	// A later transfer starts on free links.
	id = n.Push(2*time.Microsecond, 0, 0, 500)
	if got := ends(t, n)[id]; got != 2500*time.Nanosecond {
		t.Errorf("second push ends at %s, want 2.5µs", got)
	}
}

// TestIncast: K workers pushing B bytes each at the same instant into one
// shard share its downlink and all end after K·B/rate; into two shards
// (half the bytes each) after half that: each worker's uplink carries its
// two halves at once, at half its rate each, which is the shards' share.
func TestIncast(t *testing.T) {
	const k, b = 8, 4000
	for _, shards := range []int{1, 2} {
		n := mustNew(t, Spec{Default: gig}, k, shards)
		for p := range k {
			for i := range shards {
				n.Push(0, p, i, b/int64(shards))
			}
		}
		want := time.Duration(k*b/shards) * time.Nanosecond
		for id, at := range ends(t, n) {
			if at != want {
				t.Errorf("%d shard(s): push %d ends at %s, want %s", shards, id, at, want)
			}
		}
		for i := range shards {
			if l := n.Shard(i); l.BytesIn != k*b/int64(shards) || l.BusyIn != time.Duration(k*b/shards) {
				t.Errorf("shard %d's link: %+v", i, l)
			}
		}
	}
}

// TestFairShare: the max-min cases the simulator's closed forms rest on.
func TestFairShare(t *testing.T) {
	// A shard link ten times faster than the workers' takes ten of their
	// pushes at once: each ends when its own uplink has sent it.
	slow := Link{Rate: 1e8, Latency: gig.Latency}
	n := mustNew(t, Spec{Default: slow, Shards: map[int]Link{0: gig}}, 10, 1)
	for p := range 10 {
		n.Push(0, p, 0, 1000)
	}
	for id, at := range ends(t, n) {
		if at != 10*time.Microsecond {
			t.Errorf("push %d ends at %s, want 10µs (its uplink's)", id, at)
		}
	}
	// One slow worker (a tenth of the rate) among four into one shard: it
	// keeps its 10⁸ bytes/s, the three others share the other 9·10⁸ (3·10⁸
	// each); once they end at 1000/3·10⁸ s, it goes on alone at its own
	// rate and ends at 1000/10⁸ s = 10 µs.
	n = mustNew(t, Spec{Default: gig, Workers: map[int]Link{0: slow}}, 4, 1)
	ids := make([]int32, 4)
	for p := range 4 {
		ids[p] = n.Push(0, p, 0, 1000)
	}
	got := ends(t, n)
	if got[ids[0]] != 10*time.Microsecond {
		t.Errorf("the slow worker's push ends at %s, want 10µs", got[ids[0]])
	}
	for _, id := range ids[1:] {
		if want := time.Duration(math.Ceil(1000 / 3e8 * 1e9)); got[id] != want {
			t.Errorf("a fast worker's push ends at %s, want %s", got[id], want)
		}
	}
	// A flow that starts halfway through another's halves its rate: two
	// pushes of 1000 bytes into one shard, the second 500 ns late, end at
	// 1.5 µs and 2 µs (the link served 2000 bytes by then).
	n = mustNew(t, Spec{Default: gig}, 2, 1)
	a := n.Push(0, 0, 0, 1000)
	if at, ok := n.Next(); !ok || at != time.Microsecond {
		t.Fatalf("alone, the first push ends at %s (%v)", at, ok)
	}
	b := n.Push(500*time.Nanosecond, 1, 0, 1000)
	got = ends(t, n)
	if got[a] != 1500*time.Nanosecond || got[b] != 2*time.Microsecond {
		t.Errorf("pushes end at %s and %s, want 1.5µs and 2µs", got[a], got[b])
	}
	// A pull and a push of the same worker use different directions.
	n = mustNew(t, Spec{Default: gig}, 1, 1)
	n.Push(0, 0, 0, 1000)
	n.Pull(0, 0, 0, 1000)
	for id, at := range ends(t, n) {
		if at != time.Microsecond {
			t.Errorf("transfer %d ends at %s, want 1µs (full duplex)", id, at)
		}
	}
}

// TestApplies: applies run one after another.
func TestApplies(t *testing.T) {
	n := mustNew(t, Spec{Default: gig, ApplyRate: 1e9}, 1, 1)
	if end := n.Apply(0, 0, 2000); end != 2*time.Microsecond {
		t.Errorf("apply ends at %s", end)
	}
	if end := n.Apply(time.Microsecond, 0, 1000); end != 3*time.Microsecond || n.ApplyFree(0) != end {
		t.Errorf("the second apply ends at %s, want 3µs (after the first)", end)
	}
	inst := mustNew(t, Spec{Default: gig}, 1, 1)
	if end := inst.Apply(7, 0, 1<<20); end != 7 {
		t.Errorf("an instant apply ends at %s", end)
	}
}

func TestBlockBytes(t *testing.T) {
	got := BlockBytes(10, 3)
	want := []int64{3*4 + HeaderBytes, 3*4 + HeaderBytes, 4*4 + HeaderBytes}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("BlockBytes(10, 3) = %v, want %v", got, want)
		}
	}
}

func TestParseLink(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Link
	}{
		{"rate=10Gbit,latency=50us", Link{Rate: 1.25e9, Latency: 50 * time.Microsecond}},
		{"rate=100Mbit", Link{Rate: 12.5e6, Latency: DefaultLink.Latency}},
		{"latency=2ms", Link{Rate: DefaultLink.Rate, Latency: 2 * time.Millisecond}},
		{" RATE = 1gbps , latency=1ms", Link{Rate: 1.25e8, Latency: time.Millisecond}},
		{"rate=25Gbit/s", Link{Rate: 25e9 / 8, Latency: DefaultLink.Latency}},
	} {
		got, err := ParseLink(c.in, DefaultLink)
		if err != nil || got != c.want {
			t.Errorf("ParseLink(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if back, err := ParseLink(got.String(), Link{}); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", c.in, got.String(), back, err)
		}
	}
	i, l, err := ParseOverride("3:rate=1Gbit", DefaultLink)
	if err != nil || i != 3 || l.Rate != 1.25e8 || l.Latency != DefaultLink.Latency {
		t.Errorf("ParseOverride: %d %+v %v", i, l, err)
	}
}

// TestBadInput: every refusal names what is wrong.
func TestBadInput(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{"", "empty"},
		{"rate=0Gbit", "rate"},
		{"rate=-1Gbit", "rate"},
		{"rate=10", "unit"},
		{"rate=fastGbit", "not a number"},
		{"rate=2Tbit", "1Tbit"},
		{"latency=0s", "latency"},
		{"latency=-1ms", "latency"},
		{"latency=soon", "duration"},
		{"bandwidth=1Gbit", "no field"},
		{"rate=1Gbit,rate=2Gbit", "twice"},
		{"rate", "key=value"},
	} {
		if _, err := ParseLink(c.in, DefaultLink); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseLink(%q): %v, want an error saying %q", c.in, err, c.says)
		}
	}
	for _, in := range []string{"rate=1Gbit", "x:rate=1Gbit", "-1:rate=1Gbit", "1:rate=0bit"} {
		if _, _, err := ParseOverride(in, DefaultLink); err == nil {
			t.Errorf("ParseOverride(%q) accepted", in)
		}
	}
	if _, err := New(Spec{Default: gig, Shards: map[int]Link{2: gig}}, 4, 2); err == nil || !strings.Contains(err.Error(), "shard 2") {
		t.Errorf("an override of shard 2 in a job of 2 shards: %v", err)
	}
	if _, err := New(Spec{Default: gig, Workers: map[int]Link{-1: gig}}, 4, 2); err == nil || !strings.Contains(err.Error(), "worker -1") {
		t.Errorf("an override of worker -1: %v", err)
	}
	if _, err := New(Spec{Default: Link{}}, 1, 1); err == nil {
		t.Error("a zero default link accepted")
	}
	if _, err := New(Spec{Default: gig, ApplyRate: -1}, 1, 1); err == nil {
		t.Error("a negative apply rate accepted")
	}
}

// FuzzParseLink: any text is either refused or read as a link that the
// model accepts, and what it reads writes back to the same link.
func FuzzParseLink(f *testing.F) {
	for _, s := range []string{"rate=10Gbit,latency=50us", "rate=1.5Mbit", "latency=2ms", "3:rate=1Gbit", "rate=0bit", "rate=1e400Gbit", ",", "rate=NaNGbit", "degrade=10,from=3m,to=6m", "degrade=1e-3,from=0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLink(s, DefaultLink)
		if err != nil {
			return
		}
		if err := l.check("fuzzed"); err != nil {
			t.Fatalf("%q accepted as %+v, which the model refuses: %v", s, l, err)
		}
		if _, err := New(Spec{Default: l}, 1, 1); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if back, err := ParseLink(l.String(), Link{}); err != nil || back.Latency != l.Latency || math.Abs(back.Rate-l.Rate) > 1e-9*l.Rate ||
			back.Degrade != l.Degrade || back.From != l.From || back.To != l.To {
			t.Fatalf("%q read as %+v writes as %q, read back as %+v (%v)", s, l, l.String(), back, err)
		}
	})
}

// TestFairShareAgainstReference: random transfers between random workers
// and shards on links of random rates end when a plain max-min solver,
// recomputing every rate from scratch at every start and end, says they
// end (to the nanosecond, give or take rounding).
func TestFairShareAgainstReference(t *testing.T) {
	rates := []float64{1e8, 1e9, 1e9, 1e9, 2.5e9}
	rng := uint64(12345)
	rnd := func(k int) int { // xorshift: the test's own stream
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(k))
	}
	for trial := range 300 {
		workers, shards := 1+rnd(6), 1+rnd(3)
		s := Spec{Default: gig, Workers: map[int]Link{}, Shards: map[int]Link{}}
		for p := range workers {
			s.Workers[p] = Link{Rate: rates[rnd(len(rates))], Latency: gig.Latency}
		}
		for i := range shards {
			s.Shards[i] = Link{Rate: rates[rnd(len(rates))], Latency: gig.Latency}
		}
		n := mustNew(t, s, workers, shards)
		ref := newRefNet(n)
		var now time.Duration
		type start struct {
			at    time.Duration
			push  bool
			p, i  int
			bytes int64
		}
		var starts []start
		for range 1 + rnd(30) {
			now += time.Duration(rnd(3000)) * time.Nanosecond
			starts = append(starts, start{now, rnd(2) == 0, rnd(workers), rnd(shards), int64(100 + rnd(5000))})
		}
		got := map[int]time.Duration{}
		ids := map[int32]int{} // live id → index in starts
		k := 0
		for guard := 0; guard < 10000 && (k < len(starts) || len(ids) > 0); guard++ {
			at, ok := n.Next()
			if k < len(starts) && (!ok || starts[k].at < at) {
				st := starts[k]
				var id int32
				if st.push {
					id = n.Push(st.at, st.p, st.i, st.bytes)
				} else {
					id = n.Pull(st.at, st.i, st.p, st.bytes)
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
		want := ref.run(func() []refStart {
			out := make([]refStart, len(starts))
			for j, st := range starts {
				a, b := int(st.p), 2*workers+shards+st.i
				if !st.push {
					a, b = 2*workers+st.i, workers+st.p
				}
				out[j] = refStart{st.at, a, b, float64(st.bytes)}
			}
			return out
		}())
		for j := range starts {
			if d, tol := got[j]-want[j], time.Duration(2*len(starts)); d < -tol || d > tol { // each end rounds up to the nanosecond: the others lag by as much
				t.Fatalf("trial %d (%d workers, %d shards, %+v): transfer %d %+v ends at %s, the reference says %s\n%+v\ngot %v\nwant %v", trial, workers, shards, s, j, starts[j], got[j], want[j], starts, got, want)
			}
		}
	}
}

type refStart struct {
	at    time.Duration
	a, b  int
	bytes float64
}

// refNet is the reference: every rate from scratch by progressive filling,
// in float seconds.
type refNet struct {
	rate    []float64
	changes []refChange // in any order
}

// refChange is link link's rate becoming rate at at.
type refChange struct {
	at   time.Duration
	link int
	rate float64
}

func newRefNet(n *Net) *refNet {
	r := &refNet{}
	for _, l := range n.links {
		r.rate = append(r.rate, l.rate)
	}
	return r
}

func (r *refNet) rates(a, b []int, live []bool) []float64 {
	out := make([]float64, len(a))
	fixed := make([]bool, len(a))
	left := append([]float64(nil), r.rate...)
	for {
		cnt := make([]int, len(r.rate))
		for f := range a {
			if live[f] && !fixed[f] {
				cnt[a[f]]++
				cnt[b[f]]++
			}
		}
		best, bl := math.Inf(1), -1
		for l, c := range cnt {
			if c > 0 && left[l]/float64(c) < best {
				best, bl = left[l]/float64(c), l
			}
		}
		if bl < 0 {
			return out
		}
		for f := range a {
			if live[f] && !fixed[f] && (a[f] == bl || b[f] == bl) {
				fixed[f], out[f] = true, best
				left[a[f]] -= best
				left[b[f]] -= best
			}
		}
	}
}

// run returns each transfer's end, rounded up to the nanosecond.
func (r *refNet) run(st []refStart) []time.Duration {
	k := len(st)
	a, b := make([]int, k), make([]int, k)
	rem, live, ends := make([]float64, k), make([]bool, k), make([]time.Duration, k)
	for j, s := range st {
		a[j], b[j], rem[j] = s.a, s.b, s.bytes
	}
	now, next := 0.0, 0
	for {
		rt := r.rates(a, b, live)
		// The next event: a start, or the first end.
		tEnd, fEnd := math.Inf(1), -1
		for f := range live {
			if live[f] && now+rem[f]/rt[f] < tEnd {
				tEnd, fEnd = now+rem[f]/rt[f], f
			}
		}
		tStart := math.Inf(1)
		if next < k {
			tStart = st[next].at.Seconds()
		}
		if fEnd < 0 && next >= k {
			return ends
		}
		tChange, c := math.Inf(1), -1
		for j, ch := range r.changes {
			if at := ch.at.Seconds(); at < tChange && at >= now {
				tChange, c = at, j
			}
		}
		if c >= 0 && tChange <= min(tEnd, tStart) {
			for f := range live {
				if live[f] {
					rem[f] -= rt[f] * (tChange - now)
				}
			}
			now = tChange
			r.rate[r.changes[c].link] = r.changes[c].rate
			r.changes = append(r.changes[:c:c], r.changes[c+1:]...)
			continue
		}
		t := min(tEnd, tStart)
		for f := range live {
			if live[f] {
				rem[f] -= rt[f] * (t - now)
			}
		}
		now = t
		if tStart <= tEnd {
			live[next] = true
			next++
			continue
		}
		for f := range live {
			if live[f] && rem[f] <= 1e-6 {
				live[f] = false
				ends[f] = time.Duration(math.Ceil(now*1e9 - 1e-3))
			}
		}
	}
}
