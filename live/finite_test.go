package live

import (
	"math"
	"testing"
)

// TestCheckFinite: every position of a NaN or ±Inf, at every length around
// the unrolled step, is found; finite extremes pass.
func TestCheckFinite(t *testing.T) {
	bads := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001)}
	for n := 0; n < 40; n++ {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.MaxFloat32 * float32(1-2*(i%2)) // the largest finite values, both signs
		}
		if err := checkFinite(v); err != nil {
			t.Fatalf("n=%d: finite block refused: %v", n, err)
		}
		for i := 0; i < n; i++ {
			for _, b := range bads {
				old := v[i]
				v[i] = b
				if checkFinite(v) == nil {
					t.Fatalf("n=%d: %v at %d not found", n, b, i)
				}
				if checkFinite(v[1:]) == nil && i > 0 {
					t.Fatalf("n=%d: %v at %d not found in an unaligned view", n, b, i)
				}
				v[i] = old
			}
		}
	}
}
