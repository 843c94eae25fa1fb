package kernel

import "math"

// FirstNonFinite returns the index of the first NaN or ±Inf in x, or -1:
//
//	for i := range x { if IsNaN(x[i]) || IsInf(x[i]) { return i } }; return -1
//
// A value is NaN or infinite exactly when its exponent field is all ones,
// so the kernels test one mask per value and name the culprit only once a
// block is known to hold one. Shards run it on every pushed piece as it
// arrives, so it must keep up with the network (the AVX2 kernel screens 32
// values per step).
func FirstNonFinite(x []float32) int {
	if len(x) == 0 {
		return -1
	}
	return firstNonFinite(x)
}

// expMask selects a float32's exponent field.
const expMask = 0x7f800000

// firstNonFiniteGo screens blocks of 32 with a branch-free OR-fold (in each
// value, (bits & expMask) + 0x00800000 reaches bit 31 exactly when the
// exponent is all ones), then scans the block that has one.
func firstNonFiniteGo(x []float32) int {
	i := 0
	for ; i+32 <= len(x); i += 32 {
		var bad uint32
		for _, v := range x[i : i+32] {
			bad |= (math.Float32bits(v)&expMask + 0x00800000) & 0x80000000
		}
		if bad != 0 {
			break
		}
	}
	return scanNonFinite(x, i)
}

// scanNonFinite is the plain loop from i on.
func scanNonFinite(x []float32, i int) int {
	for ; i < len(x); i++ {
		if math.Float32bits(x[i])&expMask == expMask {
			return i
		}
	}
	return -1
}
