package wire

import (
	"fmt"
	"math"
)

// CheckFinite returns an error wrapping ErrNonFinite that names the first
// NaN or ±Inf in v, or nil. Shard servers call it on every pushed block
// before touching their weights, so one bad gradient cannot poison a model.
func CheckFinite(v []float32) error {
	// Fast pass: an exponent field of all ones marks NaN and Inf alike, so
	// one mask-and-compare per value, OR-folded without branches, screens
	// the whole block; the slow pass only runs to name the culprit.
	var bad uint32
	for _, x := range v {
		e := math.Float32bits(x) & 0x7f800000
		bad |= (e + 0x00800000) & 0x80000000 // carries into bit 31 only when e == 0x7f800000
	}
	if bad == 0 {
		return nil
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %v at index %d", ErrNonFinite, x, i)
		}
	}
	return nil
}
