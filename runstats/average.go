package runstats

import (
	"math"
	"slices"
)

// Average is one seed's run of a group of paradigms (paradigm.Group,
// avg(…)), reported and raced as one paradigm named name: the DSSP paper's
// averaged SSP, whose Figure 3 averages the curves of the 13 thresholds.
// Its accuracy curve is the members' mean at every time any member was
// evaluated, each member's curve read linearly between its evaluations and
// held flat beyond its first and last (so a group's time to a target is
// where the mean curve crosses it, not the mean of the members' times);
// epochs and training loss are averaged the same way where every member
// records them. Counters, shares and per-worker figures are the members'
// means (counts rounded), maxima stay maxima; the mini-batch loss, which
// has gaps, is left out. members share one seed and one job, so the
// first member's job fields stand for all.
func Average(name string, members []Run, target float64, targets []float64) Run {
	if len(members) == 0 {
		return Run{Paradigm: name}
	}
	f := members[0]
	out := Run{Paradigm: name, Mode: f.Mode, Scenario: f.Scenario, Model: f.Model, Workers: f.Workers, Shards: f.Shards,
		Seed: f.Seed, Network: f.Network, Sampling: f.Sampling, Normalize: f.Normalize, ChannelMean: f.ChannelMean}
	n := float64(len(members))
	meanOf := func(v func(r *Run) float64) float64 {
		s := 0.0
		for i := range members {
			s += v(&members[i])
		}
		return s / n
	}
	count := func(v func(r *Run) int64) int64 {
		return int64(math.Round(meanOf(func(r *Run) float64 { return float64(v(r)) })))
	}
	out.Pushes = count(func(r *Run) int64 { return r.Pushes })
	out.Updates = count(func(r *Run) int64 { return r.Updates })
	out.Dropped = count(func(r *Run) int64 { return r.Dropped })
	out.Releases = count(func(r *Run) int64 { return r.Releases })
	out.Withheld = count(func(r *Run) int64 { return r.Withheld })
	out.ControllerCalls = count(func(r *Run) int64 { return r.ControllerCalls })
	out.Seconds = meanOf(func(r *Run) float64 { return r.Seconds })
	out.VirtualSeconds = meanOf(func(r *Run) float64 { return r.VirtualSeconds })
	out.Throughput = meanOf(func(r *Run) float64 { return r.Throughput })
	out.WaitFraction = meanOf(func(r *Run) float64 { return r.WaitFraction })
	out.StalenessMean = meanOf(func(r *Run) float64 { return r.StalenessMean })
	out.SearchSeconds = meanOf(func(r *Run) float64 { return r.SearchSeconds })
	out.ControllerSeconds = meanOf(func(r *Run) float64 { return r.ControllerSeconds })
	for i := range members {
		out.MaxGap = max(out.MaxGap, members[i].MaxGap)
		out.StalenessMax = max(out.StalenessMax, members[i].StalenessMax)
	}
	out.WorkerWait = meanFloats(members, func(r *Run) []float64 { return r.WorkerWait })
	out.ShardLinkIn = meanFloats(members, func(r *Run) []float64 { return r.ShardLinkIn })
	out.ShardLinkOut = meanFloats(members, func(r *Run) []float64 { return r.ShardLinkOut })
	out.WorkerPushes = meanCounts(members, func(r *Run) []int64 { return r.WorkerPushes })
	out.StalenessHist = meanCounts(members, func(r *Run) []int64 { return r.StalenessHist })
	if all(members, func(r *Run) bool { return r.TimeSplit != nil }) {
		out.TimeSplit = &TimeSplit{
			Compute: meanOf(func(r *Run) float64 { return r.TimeSplit.Compute }),
			Push:    meanOf(func(r *Run) float64 { return r.TimeSplit.Push }),
			Gate:    meanOf(func(r *Run) float64 { return r.TimeSplit.Gate }),
			Pull:    meanOf(func(r *Run) float64 { return r.TimeSplit.Pull }),
			Server:  meanOf(func(r *Run) float64 { return r.TimeSplit.Server }),
		}
	}
	if all(members, func(r *Run) bool { return r.SamplesLearnt != nil }) {
		v := meanOf(func(r *Run) float64 { return *r.SamplesLearnt })
		out.SamplesLearnt = &v
	}
	if !all(members, func(r *Run) bool { return len(r.Curve) > 0 }) {
		return out
	}
	var times []float64
	for i := range members {
		for _, p := range members[i].Curve {
			times = append(times, p[0])
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	curve := make([][2]float64, len(times))
	for k, t := range times {
		curve[k] = [2]float64{t, meanOf(func(r *Run) float64 { return readAt(r.Curve, nil, t) })}
	}
	if all(members, func(r *Run) bool { return len(r.CurveEpochs) == len(r.Curve) }) {
		out.CurveEpochs = make([]float64, len(times))
		for k, t := range times {
			out.CurveEpochs[k] = meanOf(func(r *Run) float64 { return readAt(r.Curve, r.CurveEpochs, t) })
		}
	}
	if all(members, func(r *Run) bool { return len(r.TrainLoss) == len(r.Curve) }) {
		out.TrainLoss = make([]float64, len(times))
		for k, t := range times {
			out.TrainLoss[k] = meanOf(func(r *Run) float64 { return readAt(r.Curve, r.TrainLoss, t) })
		}
	}
	out.SetCurve(curve, target)
	out.SetTargets(targets)
	return out
}

// readAt is a curve's value at time t: the accuracy (values nil) or
// values[k] at the curve's evaluations, linear between two evaluations,
// flat before the first and after the last.
func readAt(curve [][2]float64, values []float64, t float64) float64 {
	v := func(k int) float64 {
		if values == nil {
			return curve[k][1]
		}
		return values[k]
	}
	k, _ := slices.BinarySearchFunc(curve, t, func(p [2]float64, t float64) int {
		switch {
		case p[0] < t:
			return -1
		case p[0] > t:
			return 1
		}
		return 0
	})
	switch {
	case k == 0:
		return v(0)
	case k == len(curve):
		return v(len(curve) - 1)
	case curve[k][0] == t:
		return v(k)
	}
	t0, t1 := curve[k-1][0], curve[k][0]
	return v(k-1) + (t-t0)/(t1-t0)*(v(k)-v(k-1))
}

func all(rs []Run, ok func(r *Run) bool) bool {
	for i := range rs {
		if !ok(&rs[i]) {
			return false
		}
	}
	return true
}

// meanFloats is the element-wise mean of a per-worker or per-shard slice,
// nil unless every member has one of the same length.
func meanFloats(rs []Run, get func(r *Run) []float64) []float64 {
	n := len(get(&rs[0]))
	if n == 0 || !all(rs, func(r *Run) bool { return len(get(r)) == n }) {
		return nil
	}
	out := make([]float64, n)
	for i := range rs {
		for k, v := range get(&rs[i]) {
			out[k] += v
		}
	}
	for k := range out {
		out[k] /= float64(len(rs))
	}
	return out
}

// meanCounts is meanFloats for counts, rounded; slices of different
// lengths (a staleness histogram) are padded with zeros.
func meanCounts(rs []Run, get func(r *Run) []int64) []int64 {
	n := 0
	for i := range rs {
		n = max(n, len(get(&rs[i])))
	}
	if n == 0 {
		return nil
	}
	sum := make([]float64, n)
	for i := range rs {
		for k, v := range get(&rs[i]) {
			sum[k] += float64(v)
		}
	}
	out := make([]int64, n)
	for k, s := range sum {
		out[k] = int64(math.Round(s / float64(len(rs))))
	}
	return out
}
