//go:build !noasm

package kernel

// nonFiniteBlockAVX2 returns the start of the first 32-value block of x
// that holds a NaN or ±Inf, or len(x) rounded down to 32 when none does.
// It is AVX2 on both assembly paths: the screen is bound by memory.
//
//go:noescape
func nonFiniteBlockAVX2(x []float32) int

func firstNonFinite(x []float32) int {
	if path != PathGo {
		return scanNonFinite(x, nonFiniteBlockAVX2(x))
	}
	return firstNonFiniteGo(x)
}
