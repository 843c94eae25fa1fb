package runstats

import "math"

// The verdict's time metric. Near the plateau a constant learning rate
// keeps the test accuracy wandering by a point or two from one evaluation
// to the next, so the first time a curve touches a target a point below
// its plateau is mostly luck: over seeds, the paired log ratio of two
// paradigms' times to 84% on the pair preset has a standard deviation of
// 0.2–0.4 (docs/compare.md). SmoothedTime reads the crossing off a
// smoothed curve instead.
//
// The smoothing is a local linear fit in log time, so that it reads every
// paradigm's curve alike whatever its evaluation grid. Evaluations come
// every fraction of an epoch of computed samples, so a paradigm that
// pushes more often is evaluated more often in time (the pair preset:
// backup:b=1 every 39 s, bsp every 59 s). Any reading tied to the grid
// favours the denser one: a noisy curve sampled more often touches a level
// earlier (a first passage), and a mean over a fixed number of
// evaluations spans less time there, so it bends a concave climb less. On
// the demo's runs, halving the grid made the earlier metric (the mean of
// five evaluations, 13 levels below the target) 4–11% later, more than
// the race's 5% margin; this reading moves by under 1%. A fit in log time
// is also unchanged by stretching time: a paradigm exactly twice as slow
// has exactly twice the time.

// SmoothWidth is the standard deviation, in log time, of the smoothing's
// Gaussian weights: an evaluation at t·e^±0.5 (0.61t and 1.65t) weighs
// e^−1/2 as much as one at t. Wider smooths more (on the demo's runs, a
// median paired spread of 0.110, 0.102 and 0.097 at 0.4, 0.5 and 0.6) and
// bends the curve's shape more; the crossing barely moves between 0.3 and
// 0.6 (docs/compare.md).
const SmoothWidth = 0.5

// SmoothedTimeMethod says in words how SmoothedTime reads a curve; reports
// quote it.
const SmoothedTimeMethod = "the time the smoothed curve first reaches the target (interpolated linearly between evaluations; " +
	"not reached counts at the horizon); the smoothed curve replaces each evaluation after the first by a local linear " +
	"fit in log time of the evaluations after the first, weighted by a Gaussian of standard deviation 0.5 in log time " +
	"(an evaluation at 0.61 or 1.65 times its time weighs 0.61 as much) times the stretch of log time each evaluation " +
	"stands for, so it reads every paradigm's curve alike whatever its evaluation grid, and a curve twice as slow " +
	"takes exactly twice as long"

// SmoothedTime is the run's time metric for a target accuracy
// (SmoothedTimeMethod): when the curve smoothed by SmoothedLog first
// reaches target, at most horizon (the comparison's equal horizon; at
// least the run's own length is used), a target never reached counting at
// the horizon. reached says whether the smoothed curve reached the target.
// ok is false when there is no curve or no target.
func (r *Run) SmoothedTime(target, horizon float64) (t float64, reached, ok bool) {
	if len(r.Curve) == 0 || !(target > 0) {
		return 0, false, false
	}
	horizon = max(horizon, r.Curve[len(r.Curve)-1][0])
	s := Run{Curve: SmoothedLog(r.Curve, SmoothWidth)}
	t, reached = s.TimeTo(target)
	if !reached || t > horizon {
		t = horizon
	}
	return t, reached, true
}

// SmoothedLog is curve with each evaluation after the first replaced by
// a local linear fit, at its own time, of the evaluations after the first
// against log time, weighted by a Gaussian of standard deviation width in
// log time times the stretch of log time each evaluation stands for (half
// the distance between its neighbours), so that the weights are a
// symmetric kernel in log time however densely the run was evaluated
// (evaluations evenly spaced in time crowd at the late end in log time).
// The first evaluation (the untrained model, far below the next, at time
// 0 where log time has no value) is kept as it is and left out of every
// fit. A curve straight in log time is left where it is; so is an
// evaluation at a time ≤ 0 after the first (none in a run).
func SmoothedLog(curve [][2]float64, width float64) [][2]float64 {
	out := make([][2]float64, len(curve))
	copy(out, curve)
	var idx []int // the evaluations fitted: after the first, at a time > 0
	for i := 1; i < len(curve); i++ {
		if curve[i][0] > 0 {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	if n < 2 {
		return out
	}
	x, dx, w := make([]float64, n), make([]float64, n), make([]float64, n)
	for j, i := range idx {
		x[j] = math.Log(curve[i][0])
	}
	for j := range n {
		lo, hi := max(j-1, 0), min(j+1, n-1)
		dx[j] = (x[hi] - x[lo]) / float64(hi-lo)
	}
	for _, k := range idx {
		xk := math.Log(curve[k][0])
		// Weighted least squares of accuracy on log time, its value at
		// xk; the sums are centred on the weighted mean for accuracy.
		var sw, swx, swy float64
		for j, i := range idx {
			z := (x[j] - xk) / width
			w[j] = math.Exp(-z*z/2) * dx[j]
			sw += w[j]
			swx += w[j] * x[j]
			swy += w[j] * curve[i][1]
		}
		if !(sw > 0) {
			continue
		}
		mx, my := swx/sw, swy/sw
		var sxx, sxy float64
		for j, i := range idx {
			d := x[j] - mx
			sxx += w[j] * d * d
			sxy += w[j] * d * (curve[i][1] - my)
		}
		fit := my
		if sxx > 1e-12*sw {
			fit += sxy / sxx * (xk - mx)
		}
		out[k][1] = fit
	}
	return out
}
