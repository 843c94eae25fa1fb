package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFirstAtLeast: against the plain loop, for bounds around 2⁴⁰, the
// largest finite value and +Inf, at every position of lengths around the
// 32-wide step and at unaligned starts, with values of both signs just
// below and at the bound, NaNs and infinities; the input is not written.
func TestFirstAtLeast(t *testing.T) {
	ref := func(x []float32, bits uint32) int {
		for i, v := range x {
			if math.Float32bits(v)&0x7fffffff >= bits {
				return i
			}
		}
		return -1
	}
	bounds := []uint32{1, math.Float32bits(1 << 40), math.Float32bits(math.MaxFloat32), 0x7f800000, 0x7f800001, 0x7fffffff}
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, n := range append(level1Lengths(), 96, 97, 160, 1023) {
			for _, off := range []int{0, 1, 3} {
				x, intact := guarded(r, n, off, false)
				for _, bits := range bounds {
					below := math.Float32frombits(bits - 1)
					for i := range x {
						x[i] = below * float32(1-2*(i%2))
					}
					if bits == 1 {
						clear(x)
					}
					if got, want := FirstAtLeast(x, bits), ref(x, bits); got != want {
						t.Fatalf("n=%d off=%d bound %#x, all below: got %d, want %d", n, off, bits, got, want)
					}
					for i := range x {
						old := x[i]
						for _, v := range []float32{math.Float32frombits(bits), -math.Float32frombits(bits), float32(math.NaN()), float32(math.Inf(-1))} {
							x[i] = v
							if got, want := FirstAtLeast(x, bits), ref(x, bits); got != want {
								t.Fatalf("n=%d off=%d bound %#x: %v at %d: got %d, want %d", n, off, bits, v, i, got, want)
							}
						}
						x[i] = old
					}
				}
				if !intact() {
					t.Fatalf("n=%d off=%d: guard overwritten", n, off)
				}
			}
		}
	})
}
