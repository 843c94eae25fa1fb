package train

import (
	"time"

	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/paradigm"
)

// noiseMeter measures the gradient noise scale B_noise = tr(Σ)/|G|²
// (McCandlish et al. 2018, "An empirical model of large-batch training")
// from the applies that average k ≥ 2 gradients of b samples each: a
// gradient's expected squared norm is |G|² + tr(Σ)/b and their mean's
// |G|² + tr(Σ)/(k·b), so the two give both unknowns, summed over the
// shards' blocks and the applies since the last reading. --paradigm
// auto's prediction reads it (auto.Measured.Noise): past B_noise a larger
// step no longer buys proportionally more progress.
type noiseMeter struct {
	b      float64   // samples per gradient
	mean   []float32 // scratch: the apply's mean gradient on the block
	tr, g2 float64   // sums since the last reading
	n      int       // applies summed
	last   float64   // the latest estimate (0: none yet)
}

// add measures one apply of gs, the blocks of k ≥ 2 gradients.
func (m *noiseMeter) add(gs [][]float32) {
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

// read returns the estimate over the applies since the last reading, in
// gradients (B_noise/b: how many workers' gradients make the noise
// scale), or the last estimate when none came (under ASP none averages
// two).
func (m *noiseMeter) read() float64 {
	if m.n >= 1 && m.g2 > 0 && m.tr > 0 {
		m.last = m.tr / m.g2 / m.b
	}
	m.tr, m.g2, m.n = 0, 0, 0
	return m.last
}

// Noise is sim.NoiseMeter's: the latest gradient noise scale in
// gradients (0: not measured, or not measuring: only an auto run
// measures).
func (l *learner) Noise() float64 {
	if l.noise == nil {
		return 0
	}
	return l.noise.read()
}

// Switched is sim.Switcher's: the rule in force from now (its step size
// and local steps are the rule's).
func (l *learner) Switched(now time.Duration, rule paradigm.Spec) { l.rule = rule }
