package runstats

import "math"

// The verdict's time metric. Near the plateau a constant learning rate
// keeps the test accuracy wandering by a point or two from one evaluation
// to the next, so the first time a curve touches a target a point below
// its plateau is mostly luck: over seeds, the paired log ratio of two
// paradigms' times to 84% on the pair preset has a standard deviation of
// 0.2–0.4 (docs/compare.md). BandTime reads the same curve twice less
// noisily: it smooths the evaluations (the wandering averages out; the
// trend, close to linear over a few evaluations, does not move), and it
// averages the log time over a band of levels up to the target instead of
// taking one crossing (each level's luck is partly independent of the
// next's, and the band's lower levels sit where the curve still climbs).

// BandWidth is how far below the target (accuracy, as a fraction) the band
// of levels starts; BandLevels is how many evenly spaced levels, the
// target the last.
const (
	BandWidth  = 0.06
	BandLevels = 13
)

// SmoothSpan is how many evaluations on each side the smoothing averages:
// five in all, 5/16 of an epoch at the pair preset's evaluation every 1/16
// epoch.
const SmoothSpan = 2

// BandTimeMethod says in words how BandTime reads a curve; reports quote it.
const BandTimeMethod = "the geometric mean over 13 accuracy levels evenly spaced from 6 points below the target to the target " +
	"of the time the smoothed curve first reaches each (interpolated linearly; a level never reached counts at the horizon); " +
	"the smoothed curve replaces each evaluation after the first by the mean of the evaluations up to 2 either side of it " +
	"(as many on each side, fewer at the ends)"

// BandTime is the run's time metric for a target accuracy (BandTimeMethod):
// the geometric mean, over BandLevels levels from target−BandWidth to
// target, of when the smoothed curve (Smoothed) first reaches each level
// (leaving out the levels below the target that the first evaluation,
// the untrained model, already reaches), a level it never reaches
// counting at horizon (the comparison's equal
// horizon; at least the run's own length is used). reached says whether
// the smoothed curve reached the target itself. ok is false when there is
// no curve or no target.
func (r *Run) BandTime(target, horizon float64) (t float64, reached, ok bool) {
	if len(r.Curve) == 0 || !(target > 0) {
		return 0, false, false
	}
	horizon = max(horizon, r.Curve[len(r.Curve)-1][0])
	s := Run{Curve: Smoothed(r.Curve, SmoothSpan)}
	var sum float64
	n := 0
	for i := range BandLevels {
		level := target - BandWidth*float64(BandLevels-1-i)/float64(BandLevels-1)
		c, hit := s.TimeTo(level)
		if i == BandLevels-1 {
			reached = hit
		}
		if level <= r.Curve[0][1] && i < BandLevels-1 {
			// The untrained model is already there (a low target): the
			// level says nothing about training, and its time, the
			// first evaluation's (0), would swamp a geometric mean.
			continue
		}
		if !hit || c > horizon {
			c = horizon
		}
		sum += math.Log(max(c, 1e-6))
		n++
	}
	return math.Exp(sum / float64(n)), reached, true
}

// Smoothed is curve with each evaluation after the first replaced by the
// mean accuracy of the evaluations up to span either side of it, as many
// on each side (fewer near the ends), at its own time. The first
// evaluation (the untrained model, far below the next) is kept and left
// out of every mean: averaged in, it would drag the steep start down.
// A centred mean leaves a straight stretch of the curve where it is.
func Smoothed(curve [][2]float64, span int) [][2]float64 {
	out := make([][2]float64, len(curve))
	copy(out, curve)
	n := len(curve)
	for k := 1; k < n; k++ {
		j := min(span, k-1, n-1-k)
		var sum float64
		for i := k - j; i <= k+j; i++ {
			sum += curve[i][1]
		}
		out[k][1] = sum / float64(2*j+1)
	}
	return out
}
