package timing

import (
	"math"
	"time"
)

// Window sums the iteration times measured of each worker since its last
// reading: what --paradigm auto's planner reads of a cluster, the same
// arithmetic whether the simulator or the live coordinator measured
// them. Workers are small non-negative ids (indices, or a live job's
// member ids); the zero value is ready.
type Window struct {
	sum, sq []float64 // ns, ns² per worker
	n       []int
}

// Add counts one iteration of worker p that took d.
func (w *Window) Add(p int, d time.Duration) {
	if p >= len(w.n) {
		w.sum = append(w.sum, make([]float64, p+1-len(w.sum))...)
		w.sq = append(w.sq, make([]float64, p+1-len(w.sq))...)
		w.n = append(w.n, make([]int, p+1-len(w.n))...)
	}
	x := float64(d)
	w.sum[p] += x
	w.sq[p] += x * x
	w.n[p]++
}

// Read returns each of ids' mean iteration time over the window, in ids'
// order, and their pooled coefficient of variation (each iteration's
// deviation from its own worker's mean, so a slow worker is not spread),
// and starts the next window. A worker with no iteration counted took at
// least span, the window's length: that is its time.
func (w *Window) Read(ids []int, span time.Duration) (iter []time.Duration, cv float64) {
	var dev float64
	n := 0
	for _, p := range ids {
		if p >= len(w.n) || w.n[p] == 0 {
			iter = append(iter, max(span, 1))
			continue
		}
		mean := w.sum[p] / float64(w.n[p])
		iter = append(iter, time.Duration(mean))
		// Σ(d/mean − 1)² over the worker's iterations.
		dev += w.sq[p]/(mean*mean) - 2*w.sum[p]/mean + float64(w.n[p])
		n += w.n[p]
	}
	clear(w.sum)
	clear(w.sq)
	clear(w.n)
	if n > 0 {
		cv = math.Sqrt(max(dev, 0) / float64(n))
	}
	return iter, cv
}
