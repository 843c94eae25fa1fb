package report

import (
	"slices"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// pgroup is one paradigm of a comparison: its statistics and its runs, one
// per seed in seed order.
type pgroup struct {
	name string
	st   *compare.ParadigmStats
	runs []runstats.Run
}

// groupsOf splits the summary's runs by paradigm, in the order of its
// statistics (the order the user listed the paradigms).
func groupsOf(s *compare.Summary) []pgroup {
	gs := make([]pgroup, len(s.Paradigms))
	for i := range s.Paradigms {
		gs[i] = pgroup{name: s.Paradigms[i].Paradigm, st: &s.Paradigms[i]}
		for _, r := range s.Runs {
			if r.Paradigm == gs[i].name {
				gs[i].runs = append(gs[i].runs, r)
			}
		}
		slices.SortStableFunc(gs[i].runs, func(a, b runstats.Run) int { return compareU(a.Seed, b.Seed) })
	}
	return gs
}

func compareU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// typical is one run standing for a pgroup in the timing plots: per worker
// the median waiting share over seeds, the staleness histogram summed over
// seeds (shares are what the plot shows), and the median throughput and
// mean staleness (the table's medians, so a legend and the table agree).
func typical(g pgroup) runstats.Run {
	r := runstats.Run{Paradigm: g.name}
	if len(g.runs) == 0 {
		return r
	}
	r.Mode = g.runs[0].Mode
	r.Throughput = med(g.runs, func(x *runstats.Run) float64 { return x.Throughput })
	r.WaitFraction = med(g.runs, func(x *runstats.Run) float64 { return x.WaitFraction })
	r.StalenessMean = med(g.runs, func(x *runstats.Run) float64 { return x.StalenessMean })
	k := 0
	for i := range g.runs {
		k = max(k, len(g.runs[i].WorkerWait))
	}
	for w := range k {
		r.WorkerWait = append(r.WorkerWait, med(g.runs, func(x *runstats.Run) float64 {
			if w < len(x.WorkerWait) {
				return x.WorkerWait[w]
			}
			return 0
		}))
	}
	// The time split is the mean of the runs' shares, which still add up
	// to one (medians of each share need not).
	var ts runstats.TimeSplit
	nts := 0
	for i := range g.runs {
		if x := g.runs[i].TimeSplit; x != nil {
			nts++
			ts.Compute, ts.Push, ts.Gate, ts.Pull, ts.Server = ts.Compute+x.Compute, ts.Push+x.Push, ts.Gate+x.Gate, ts.Pull+x.Pull, ts.Server+x.Server
		}
	}
	// Each shard link's busy share, in and out: the median over seeds.
	for sh := 0; sh < len(g.runs[0].ShardLinkIn); sh++ {
		in := med(g.runs, func(x *runstats.Run) float64 {
			if sh < len(x.ShardLinkIn) {
				return x.ShardLinkIn[sh]
			}
			return 0
		})
		out := med(g.runs, func(x *runstats.Run) float64 {
			if sh < len(x.ShardLinkOut) {
				return x.ShardLinkOut[sh]
			}
			return 0
		})
		r.ShardLinkIn, r.ShardLinkOut = append(r.ShardLinkIn, in), append(r.ShardLinkOut, out)
	}
	if nts > 0 {
		f := 1 / float64(nts)
		r.TimeSplit = &runstats.TimeSplit{Compute: ts.Compute * f, Push: ts.Push * f, Gate: ts.Gate * f, Pull: ts.Pull * f, Server: ts.Server * f}
		r.Network = g.runs[0].Network
	}
	for i := range g.runs {
		for s, n := range g.runs[i].StalenessHist {
			for len(r.StalenessHist) <= s {
				r.StalenessHist = append(r.StalenessHist, 0)
			}
			r.StalenessHist[s] += n
		}
		r.StalenessMax = max(r.StalenessMax, g.runs[i].StalenessMax)
		r.MaxGap = max(r.MaxGap, g.runs[i].MaxGap)
		r.ControllerCalls += g.runs[i].ControllerCalls
		r.ControllerSeconds += g.runs[i].ControllerSeconds
		r.Dropped += g.runs[i].Dropped
	}
	return r
}

func med(runs []runstats.Run, f func(*runstats.Run) float64) float64 {
	xs := make([]float64, len(runs))
	for i := range runs {
		xs[i] = f(&runs[i])
	}
	if m := compare.MedianInterval(xs).Median; m != nil {
		return *m
	}
	return 0
}

// trainedAny reports whether the comparison is about accuracy at all.
func trainedAny(s *compare.Summary) bool {
	for i := range s.Runs {
		if len(s.Runs[i].Curve) > 0 {
			return true
		}
	}
	return false
}
