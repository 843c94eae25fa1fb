package train

import (
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// Noise is sim.NoiseMeter's: the latest gradient noise scale in
// gradients (0: not measured, or not measuring: only an auto run
// measures).
func (l *learner) Noise() float64 {
	if l.noise == nil {
		return 0
	}
	return l.noise.Read()
}

// Switched is sim.Switcher's: the rule in force from now (its step size
// and local steps are the rule's).
func (l *learner) Switched(now time.Duration, rule paradigm.Spec) { l.rule = rule }
