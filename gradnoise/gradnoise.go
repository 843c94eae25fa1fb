// Package gradnoise measures the gradient noise scale B_noise = tr(Σ)/|G|²
// (McCandlish et al. 2018, "An empirical model of large-batch training")
// from the steps that average k ≥ 2 gradients of b samples each: a
// gradient's expected squared norm is |G|² + tr(Σ)/b and their mean's
// |G|² + tr(Σ)/(k·b), so each such step gives both unknowns. --paradigm
// auto's prediction reads it: past B_noise a larger step no longer buys
// proportionally more progress. Virtual time measures every shard's
// block; a live shard 0, whose coordinator decides, measures its own.
package gradnoise

import "github.com/pacer-ps/pacer/internal/kernel"

// Meter sums the estimates of the steps since its last reading.
type Meter struct {
	b      float64   // samples per gradient
	mean   []float32 // scratch: the step's mean gradient on the block
	tr, g2 float64   // sums since the last reading
	n      int       // steps summed
	last   float64   // the latest estimate (0: none yet)
}

// New is a meter of gradients that each average b samples.
func New(b int) *Meter { return &Meter{b: float64(max(b, 1))} }

// Add measures one step of gs, the same block of k gradients (k < 2:
// nothing to measure). Blocks of one step on several shards add up: norms
// add over coordinates.
func (m *Meter) Add(gs [][]float32) {
	k := len(gs)
	if k < 2 {
		return
	}
	n := len(gs[0])
	if cap(m.mean) < n {
		m.mean = make([]float32, n)
	}
	mean := m.mean[:n]
	clear(mean)
	var small float64
	for _, g := range gs {
		small += float64(kernel.DotUnitary(g, g))
		kernel.AxpyUnitary(1/float32(k), g, mean)
	}
	small /= float64(k)
	big := float64(kernel.DotUnitary(mean, mean))
	tr := (small - big) / (1/m.b - 1/(float64(k)*m.b))
	m.tr += tr
	m.g2 += small - tr/m.b
	m.n++
}

// Read returns the estimate over the steps since the last reading, in
// gradients (B_noise/b: how many gradients make the noise scale), or the
// last estimate when none came (under ASP none averages two); 0 before
// any.
func (m *Meter) Read() float64 {
	if m.n >= 1 && m.g2 > 0 && m.tr > 0 {
		m.last = m.tr / m.g2 / m.b
	}
	m.tr, m.g2, m.n = 0, 0, 0
	return m.last
}
