//go:build !noasm

package kernel

// atLeastBlockAVX2 returns the start of the first 32-value block of x
// holding a value whose magnitude's bits are above gt, or len(x) rounded
// down to 32 when none does.
//
//go:noescape
func atLeastBlockAVX2(x []float32, gt uint32) int

func firstAtLeast(x []float32, bits uint32) int {
	if path != PathGo {
		return scanAtLeast(x, atLeastBlockAVX2(x, bits-1), bits)
	}
	return firstAtLeastGo(x, bits)
}
