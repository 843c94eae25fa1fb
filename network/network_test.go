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

// TestOneTransfer: bytes/rate through both links, plus both latencies.
func TestOneTransfer(t *testing.T) {
	n := mustNew(t, Spec{Default: gig}, 1, 1)
	if got, want := n.Push(0, 0, 0, 1000), 1000*time.Nanosecond+10*time.Microsecond; got != want {
		t.Errorf("push arrives at %s, want %s", got, want)
	}
	// The worker's uplink is free again at 1 µs; the shard's downlink too.
	if got, want := n.Push(time.Microsecond, 0, 0, 500), 1500*time.Nanosecond+10*time.Microsecond; got != want {
		t.Errorf("second push arrives at %s, want %s", got, want)
	}
}

// TestIncast: K workers pushing B bytes each at the same instant into one
// shard: the last arrives after K·B/rate at the shard's downlink; into two
// shards (half the bytes each) after half that, plus the one half-block a
// worker's uplink sends before its second (FIFO at the sender: fair
// sharing would send both halves at once, and end at K·B/2/rate).
func TestIncast(t *testing.T) {
	const k, b = 8, 4000
	for _, shards := range []int{1, 2} {
		n := mustNew(t, Spec{Default: gig}, k, shards)
		var last time.Duration
		for p := range k {
			for i := range shards {
				last = max(last, n.Push(0, p, i, b/int64(shards)))
			}
		}
		want := time.Duration(k*b/shards)*time.Nanosecond + 10*time.Microsecond
		if shards == 2 {
			want += b / 2 * time.Nanosecond
		}
		if last != want {
			t.Errorf("%d shard(s): the last push arrives at %s, want %s", shards, last, want)
		}
		for i := range shards {
			if l := n.Shard(i); l.BytesIn != k*b/int64(shards) || l.BusyIn != time.Duration(k*b/shards) {
				t.Errorf("shard %d's link: %+v", i, l)
			}
		}
	}
}

// TestFastShardSlowWorkers: a shard link ten times faster than the
// workers' takes ten of their pushes at once: each ends when its own
// uplink has sent it, not one after another.
func TestFastShardSlowWorkers(t *testing.T) {
	slow := Link{Rate: 1e8, Latency: gig.Latency}
	n := mustNew(t, Spec{Default: slow, Shards: map[int]Link{0: {Rate: 1e9, Latency: gig.Latency}}}, 10, 1)
	for p := range 10 {
		if got, want := n.Push(0, p, 0, 1000), 10*time.Microsecond+10*time.Microsecond; got != want {
			t.Errorf("worker %d's push arrives at %s, want %s (its uplink's 10 µs)", p, got, want)
		}
	}
}

// TestApplyHoldsPulls: a pull that reaches a shard while it applies
// leaves once the apply ends; applies run one after another.
func TestApplyHoldsPulls(t *testing.T) {
	n := mustNew(t, Spec{Default: gig, ApplyRate: 1e9}, 1, 1)
	if end := n.Apply(0, 0, 2000); end != 2*time.Microsecond {
		t.Errorf("apply ends at %s", end)
	}
	if end := n.Apply(time.Microsecond, 0, 1000); end != 3*time.Microsecond {
		t.Errorf("the second apply ends at %s, want 3µs (after the first)", end)
	}
	if got, want := n.Pull(0, 0, 0, 1000), 3*time.Microsecond+time.Microsecond+10*time.Microsecond; got != want {
		t.Errorf("pull arrives at %s, want %s", got, want)
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
	for _, s := range []string{"rate=10Gbit,latency=50us", "rate=1.5Mbit", "latency=2ms", "3:rate=1Gbit", "rate=0bit", "rate=1e400Gbit", ",", "rate=NaNGbit"} {
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
		if back, err := ParseLink(l.String(), Link{}); err != nil || back.Latency != l.Latency || math.Abs(back.Rate-l.Rate) > 1e-9*l.Rate {
			t.Fatalf("%q read as %+v writes as %q, read back as %+v (%v)", s, l, l.String(), back, err)
		}
	})
}
