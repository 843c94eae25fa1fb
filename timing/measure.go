package timing

import (
	"math"
	"time"
)

// MaxDraws bounds a worker model's measured multipliers (WorkerSpec.Draws)
// and what a Window keeps of them.
const MaxDraws = 4096

// MaxDraw bounds one measured multiplier: an iteration a million times
// its worker's mean is not a measurement.
const MaxDraw = 1e6

// Window collects the iteration times measured of each worker since its
// last reading: what --paradigm auto's planner reads of a cluster, the
// same arithmetic whether the simulator or the live coordinator measured
// them. Workers are small non-negative ids (indices, or a live job's
// member ids); the zero value is ready.
type Window struct {
	ds [][]time.Duration // per worker, in the order measured
}

// Add counts one iteration of worker p that took d.
func (w *Window) Add(p int, d time.Duration) {
	if p >= len(w.ds) {
		w.ds = append(w.ds, make([][]time.Duration, p+1-len(w.ds))...)
	}
	w.ds[p] = append(w.ds[p], d)
}

// Read returns each of ids' mean iteration time over the window, in ids'
// order; their pooled coefficient of variation (each iteration's
// deviation from its own worker's mean, so a slow worker is not spread);
// and the iterations as multipliers of their worker's mean (in ids' order,
// then as measured, the first MaxDraws): the shape of the spread itself,
// which a heavy tail gives and a coefficient of variation does not. A
// worker with no iteration counted took at least span, the window's
// length: that is its time. Read starts the next window.
func (w *Window) Read(ids []int, span time.Duration) (iter []time.Duration, cv float64, draws []float64) {
	var dev float64
	n := 0
	for _, p := range ids {
		if p >= len(w.ds) || len(w.ds[p]) == 0 {
			iter = append(iter, max(span, 1))
			continue
		}
		ds := w.ds[p]
		var sum float64
		for _, d := range ds {
			sum += float64(d)
		}
		mean := sum / float64(len(ds))
		iter = append(iter, time.Duration(mean))
		for _, d := range ds {
			r := float64(d) / mean
			dev += (r - 1) * (r - 1)
			if len(draws) < MaxDraws {
				draws = append(draws, r)
			}
		}
		n += len(ds)
	}
	for p := range w.ds {
		w.ds[p] = w.ds[p][:0]
	}
	if n > 0 {
		cv = math.Sqrt(dev / float64(n))
	}
	return iter, cv, draws
}
