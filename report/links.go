package report

import (
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// When the network matters. A link's busy share is the share of the run
// one shard's link spent moving data, receiving pushes plus sending pulls
// (at most 100%: where the two directions overlap, as under ASP, the sum
// counts the overlap twice, so it bounds the time the link was in use from
// above). The network does not matter when every link was busy under
// NetworkIdle of the run and the workers spent under NetworkIdle of their
// time pushing and pulling (what catches a slow worker's own link and the
// latencies, which the shards' links do not see); it dominates when a link
// was busy over NetworkDominant of the run or the workers spent over
// NetworkDominant of their time pushing and pulling: then the transfers,
// not the computation, set the pace. Between the two it shapes the results.
const (
	NetworkIdle     = 0.05
	NetworkDominant = 0.5
)

// AssumedBase is what the report and the tables say beside a link's busy
// share when the scenario gave no base: every share scales with it.
const AssumedBase = "iteration time 1 s assumed (set base)"

// LinkBusy is r's busiest shard link: its index and busy share (ok false
// without a network).
func LinkBusy(r *runstats.Run) (shard int, share float64, ok bool) {
	for i := range r.ShardLinkIn {
		v := r.ShardLinkIn[i]
		if i < len(r.ShardLinkOut) {
			v += r.ShardLinkOut[i]
		}
		if v = min(1, v); !ok || v > share {
			shard, share, ok = i, v, true
		}
	}
	return shard, share, ok
}

// NetworkRole says whether the network mattered to r: "does not matter",
// "dominates" or "shapes the results" ("" without a network).
func NetworkRole(r *runstats.Run) string {
	_, busy, ok := LinkBusy(r)
	if !ok {
		return ""
	}
	moving := 0.0
	if ts := r.TimeSplit; ts != nil {
		moving = ts.Push + ts.Pull
	}
	switch {
	case busy > NetworkDominant || moving > NetworkDominant:
		return "dominates"
	case busy < NetworkIdle && moving < NetworkIdle:
		return "does not matter"
	}
	return "shapes the results"
}

// linkCell is the table's "links busy / transfers" cell: the busiest
// shard link's share (per shard, the median over seeds) and the workers'
// share of their time spent pushing and pulling (the mean over seeds).
func linkCell(g pgroup) string {
	t := typical(g)
	_, busy, ok := LinkBusy(&t)
	if !ok {
		return "—"
	}
	if ts := t.TimeSplit; ts != nil {
		return pct(busy) + " / " + pct(ts.Push+ts.Pull)
	}
	return pct(busy)
}

// anyLinks is whether the comparison simulated a network.
func anyLinks(s *compare.Summary) bool {
	for i := range s.Runs {
		if len(s.Runs[i].ShardLinkIn) > 0 {
			return true
		}
	}
	return false
}

// linkNotes say what "links busy" is, for which paradigms the network did
// not matter or dominated, and, when the scenario gave no base, that the
// shares rest on the 1 s default.
func linkNotes(s *compare.Summary) []string {
	if !anyLinks(s) {
		return nil
	}
	by := map[string][]string{}
	gs := groupsOf(s)
	for _, g := range gs {
		t := typical(g)
		if role := NetworkRole(&t); role != "" {
			by[role] = append(by[role], g.name)
		}
	}
	line := "Links busy: the busiest shard link's share of the run spent moving data (receiving pushes plus sending pulls, at most 100%; per link the median over seeds); transfers: the workers' share of their time spent pushing and pulling (their own links, the shards' links, the queues and the latencies)"
	if s.Scenario.Base == "" && (s.Mode == runstats.Virtual || s.Mode == runstats.Sim) {
		line += "; " + AssumedBase + ": a shorter iteration makes every link busier"
	}
	line += "."
	for role, n := range by {
		if len(n) == len(gs) && len(gs) > 1 {
			by[role] = []string{"every paradigm"}
		}
	}
	if n := by["does not matter"]; len(n) > 0 {
		line += fmt.Sprintf(" The network does not matter for %s: every link busy under %s of the run, and transfers under %s of the workers' time.",
			strings.Join(n, ", "), pct(NetworkIdle), pct(NetworkIdle))
	}
	if n := by["dominates"]; len(n) > 0 {
		line += fmt.Sprintf(" The network dominates for %s: a link busy over %s of the run, or transfers over %s of the workers' time.",
			strings.Join(n, ", "), pct(NetworkDominant), pct(NetworkDominant))
	}
	if n := by["shapes the results"]; len(n) > 0 {
		line += fmt.Sprintf(" It shapes the results for %s (between %s and %s).", strings.Join(n, ", "), pct(NetworkIdle), pct(NetworkDominant))
	}
	return []string{line}
}
