package kernel

import "math"

// FirstAtLeast returns the index of the first value of x whose magnitude's
// bits reach bits (math.Float32bits(|x[i]|) ≥ bits), or -1. NaN and ±Inf
// reach any finite value's bits, so FirstAtLeast(x, Float32bits(2⁴⁰))
// finds the first value that is NaN, infinite or at least 2⁴⁰ in
// magnitude, at the speed of FirstNonFinite (the same screen, another
// compare):
//
//	for i := range x { if Float32bits(x[i])&0x7fffffff >= bits { return i } }; return -1
func FirstAtLeast(x []float32, bits uint32) int {
	if len(x) == 0 {
		return -1
	}
	if bits == 0 {
		return 0
	}
	return firstAtLeast(x, min(bits, 0x7fffffff))
}

const absMask = 0x7fffffff

// firstAtLeastGo screens blocks of 32 with a branch-free OR-fold (|x|'s
// bits + 2³¹ − bits reaches bit 31 exactly when they are ≥ bits), then
// scans the block that has one.
func firstAtLeastGo(x []float32, bits uint32) int {
	i := 0
	add := 0x80000000 - bits
	for ; i+32 <= len(x); i += 32 {
		var hit uint32
		for _, v := range x[i : i+32] {
			hit |= (math.Float32bits(v)&absMask + add) & 0x80000000
		}
		if hit != 0 {
			break
		}
	}
	return scanAtLeast(x, i, bits)
}

// scanAtLeast is the plain loop from i on.
func scanAtLeast(x []float32, i int, bits uint32) int {
	for ; i < len(x); i++ {
		if math.Float32bits(x[i])&absMask >= bits {
			return i
		}
	}
	return -1
}
