package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFirstNonFinite: every kind of NaN and infinity, at every position of
// lengths around the 32-wide step and at unaligned starts, is found first
// (a second bad value later never hides the first); finite extremes,
// subnormals and zeros pass; the input is not written.
func TestFirstNonFinite(t *testing.T) {
	bads := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xff800001), math.Float32frombits(0x7fffffff)}
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range append(level1Lengths(), 96, 97, 160, 1023) {
			for _, off := range []int{0, 1, 3} {
				x, intact := guarded(r, n, off, false)
				for i := range x {
					switch i % 4 {
					case 0:
						x[i] = math.MaxFloat32 * float32(1-2*(i%2))
					case 1:
						x[i] = math.Float32frombits(1) // the smallest subnormal
					case 2:
						x[i] = float32(math.Copysign(0, -1))
					}
				}
				if got := FirstNonFinite(x); got != -1 {
					t.Fatalf("n=%d off=%d: finite block: got %d, want -1", n, off, got)
				}
				for i := range x {
					oldI, oldLast := x[i], x[n-1]
					b := bads[(i+n)%len(bads)]
					x[n-1] = bads[0] // a later bad value must not win
					x[i] = b
					if got := FirstNonFinite(x); got != i {
						t.Fatalf("n=%d off=%d: %v at %d: got %d", n, off, b, i, got)
					}
					x[n-1] = oldLast
					x[i] = oldI
				}
				if !intact() {
					t.Fatalf("n=%d off=%d: guard overwritten", n, off)
				}
			}
		}
	})
}
