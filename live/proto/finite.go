package proto

import (
	"fmt"

	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/wire"
)

// Frames carry no NaN or ±Inf (docs/protocol.md): a worker checks what it
// pushes, a shard what it is pushed.

// CheckFinite is wire.CheckFinite at the speed of the vector kernel (AVX2
// on amd64, a blocked Go loop elsewhere and under -tags noasm).
func CheckFinite(v []float32) error { return FiniteAt(v, 0) }

// FiniteAt checks v, a piece that starts at index off of its block, and
// names the culprit by its index in the block.
func FiniteAt(v []float32, off int) error {
	i := kernel.FirstNonFinite(v)
	if i < 0 {
		return nil
	}
	return fmt.Errorf("%w: %v at index %d", wire.ErrNonFinite, v[i], off+i)
}
