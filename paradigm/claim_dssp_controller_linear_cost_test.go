// Claim: the DSSP controller costs O(r_max) (PARADIGMS.md §4: two pointers
// over two arithmetic sequences, not O(r_max²)) and returns exactly what the
// quadratic definition returns, ties included.

package paradigm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// controllerQuadratic is the specification read literally: O(r_max²).
func controllerQuadratic(ap0, ap1, as0, as1 time.Duration, rmax int) int {
	ip, is := ap0-ap1, as0-as1
	if rmax <= 0 || ip <= 0 || is <= 0 {
		return 0
	}
	best, bestR := time.Duration(1<<62), 0
	for r := 0; r <= rmax; r++ {
		for k := 0; k <= rmax; k++ {
			d := absDur(as0 + time.Duration(k+1)*is - (ap0 + time.Duration(r)*ip))
			if d < best {
				best, bestR = d, r
			}
		}
	}
	return bestR
}

func TestControllerMatchesQuadraticDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		rmax := rng.IntN(20)
		// Coarse grids make exact ties common, which is where tie rules break.
		unit := time.Duration(1+rng.IntN(3)) * 100 * time.Millisecond
		ap0 := time.Duration(rng.IntN(50)) * unit
		ap1 := ap0 - time.Duration(rng.IntN(6))*unit
		as0 := ap0 - time.Duration(rng.IntN(30))*unit
		as1 := as0 - time.Duration(rng.IntN(12))*unit
		got := Controller(ap0, ap1, as0, as1, rmax)
		want := controllerQuadratic(ap0, ap1, as0, as1, rmax)
		if got != want {
			t.Fatalf("Controller(%v,%v,%v,%v,%d) = %d, want %d", ap0, ap1, as0, as1, rmax, got, want)
		}
	}
}

// BenchmarkController shows the O(r_max) cost: ns/op grows tenfold per
// tenfold r_max, against the quadratic definition in the same run.
func BenchmarkController(b *testing.B) {
	for _, rmax := range []int{12, 120, 1200} {
		now := 100 * sec
		as0, as1 := now-800*time.Millisecond, now-3*sec
		b.Run(fmt.Sprintf("rmax=%d", rmax), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += Controller(now, now-sec, as0, as1, rmax)
			}
		})
		b.Run(fmt.Sprintf("quadratic/rmax=%d", rmax), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += controllerQuadratic(now, now-sec, as0, as1, rmax)
			}
		})
	}
}

var sink int
