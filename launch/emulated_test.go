package launch

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
)

// The cluster a check predicts is the one tcp mode makes: without netem a
// latency above the veth's is predicted as the veth's and said to be so;
// with netem it is kept; one within the veth's is kept and said to be
// left to it. The caller's spec is not changed.
func TestEmulated(t *testing.T) {
	spec := &network.Spec{Default: network.Link{Rate: 12.5e6, Latency: 50 * time.Microsecond},
		Workers:   map[int]network.Link{1: {Rate: 1.25e6, Latency: time.Millisecond}},
		Shards:    map[int]network.Link{0: {Rate: 12.5e6, Latency: 2 * time.Millisecond}},
		ApplyRate: network.DefaultApplyRate}
	before := spec.String()

	got, notes := Emulated(spec, false)
	if spec.String() != before {
		t.Fatalf("Emulated changed its argument: %s, was %s", spec, before)
	}
	if got.Default != spec.Default || got.Workers[1] != (network.Link{Rate: 1.25e6, Latency: VethLatency}) ||
		got.Shards[0] != (network.Link{Rate: 12.5e6, Latency: VethLatency}) || got.ApplyRate != spec.ApplyRate {
		t.Errorf("without netem: %s", got)
	}
	text := strings.Join(notes, "\n")
	for _, w := range []string{"Latency 50µs is not shaped live", "Latency 1ms, 2ms cannot be shaped live: this kernel has no netem", "charges 100µs in its place"} {
		if !strings.Contains(text, w) {
			t.Errorf("without netem the notes do not say %q:\n%s", w, text)
		}
	}

	got, notes = Emulated(spec, true)
	if got.String() != before {
		t.Errorf("with netem: %s, want %s", got, before)
	}
	text = strings.Join(notes, "\n")
	if !strings.Contains(text, "Latency 1ms, 2ms is added live by the kernel's netem") || strings.Contains(text, "cannot") {
		t.Errorf("with netem the notes say:\n%s", text)
	}
	if s, n := Emulated(nil, false); s != nil || n != nil {
		t.Errorf("no network: %v, %v", s, n)
	}
}
