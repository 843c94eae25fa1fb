package launch

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/network"
)

// ErrWindowNotEmulated refuses a live job whose links degrade for a
// window: the emulated links are tc htb classes set once, when the hosts
// are made, and nothing changes them at the job's time.
var ErrWindowNotEmulated = errors.New("a link's degrade (with from, to) is simulated only: the live links are shaped once when their hosts are made; leave degrade out, or run in sim or virtual time")

// Emulated is spec as tcp mode can emulate it here (netem: whether this
// kernel has the netem queueing discipline, nsnet.Netem), and one sentence
// for each way the emulation differs from what spec says. Rates are shaped
// as given (tc htb). A latency up to VethLatency is left to the veth's
// own, which is of that order. A larger one needs netem; without it the
// link keeps the veth's latency, and the returned spec has VethLatency in
// its place, so that a prediction of it is of the cluster that runs.
func Emulated(spec *network.Spec, netem bool) (*network.Spec, []string) {
	if spec == nil {
		return nil, nil
	}
	out := *spec
	var veth, added, capped []time.Duration
	fix := func(l network.Link) network.Link {
		switch {
		case l.Latency <= VethLatency:
			veth = append(veth, l.Latency)
		case netem:
			added = append(added, l.Latency)
		default:
			capped = append(capped, l.Latency)
			l.Latency = VethLatency
		}
		return l
	}
	out.Default = fix(spec.Default)
	for _, m := range []*map[int]network.Link{&out.Workers, &out.Shards} {
		if *m == nil {
			continue
		}
		fixed := make(map[int]network.Link, len(*m))
		for _, i := range slices.Sorted(maps.Keys(*m)) {
			fixed[i] = fix((*m)[i])
		}
		*m = fixed
	}
	var notes []string
	if len(veth) > 0 {
		notes = append(notes, fmt.Sprintf("Latency %s is not shaped live: up to %s it is left to the veth's own (tens of µs), so the live links' latency is of that order, not exactly it.",
			durations(veth), VethLatency))
	}
	if len(added) > 0 {
		notes = append(notes, fmt.Sprintf("Latency %s is added live by the kernel's netem.", durations(added)))
	}
	if len(capped) > 0 {
		notes = append(notes, fmt.Sprintf("Latency %s cannot be shaped live: this kernel has no netem (kernel module sch_netem). "+
			"The live links have the veth's own latency (tens of µs), and the prediction here charges %s in its place, so this check does not test the latency asked for.",
			durations(capped), VethLatency))
	}
	return &out, notes
}

// durations lists the distinct values of ds, smallest first.
func durations(ds []time.Duration) string {
	slices.Sort(ds)
	ds = slices.Compact(ds)
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
}
