// Claim: PARADIGMS.md §4's known defect of the literal DSSP algorithm: on a
// persistently heterogeneous pair the gap grows past s_U without limit, while
// mode=bounded (Theorem 2) keeps it within s_U.

package sim

import (
	"testing"

	"github.com/pacer-ps/pacer/timing"
)

// §4: literal DSSP lets the gap grow without limit on a persistently
// heterogeneous pair; bounded mode keeps it within s_U.
func TestDSSPLiteralGapIsUnbounded(t *testing.T) {
	for _, opt := range []string{"", ",wait=sl"} {
		cfg := Config{Workers: 2, Timing: timing.WorkerSpec{Speeds: []float64{1, 2.2}}, Iterations: 400, Seed: 1}
		lit, err := Run(withSpec(cfg, "dssp:sl=3,su=15"+opt))
		if err != nil {
			t.Fatal(err)
		}
		bnd, err := Run(withSpec(cfg, "dssp:sl=3,su=15,mode=bounded"+opt))
		if err != nil {
			t.Fatal(err)
		}
		if lit.MaxGap <= 100 {
			t.Errorf("literal DSSP%s max gap %d: expected it to grow far past s_U", opt, lit.MaxGap)
		}
		if bnd.MaxGap > 15 {
			t.Errorf("bounded DSSP%s max gap %d > s_U", opt, bnd.MaxGap)
		}
		cfg.Iterations = 800
		lit2, _ := Run(withSpec(cfg, "dssp:sl=3,su=15"+opt))
		if lit2.MaxGap < lit.MaxGap*3/2 {
			t.Errorf("literal%s gap did not keep growing: %d after 400 iterations, %d after 800", opt, lit.MaxGap, lit2.MaxGap)
		}
	}
}
