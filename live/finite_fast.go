//go:build (amd64 || arm64) && !purego

package live

import (
	"unsafe"

	"github.com/pacer-ps/pacer/wire"
)

// checkFinite is wire.CheckFinite at memory speed: it screens two floats
// per 64-bit word, four words per step, and calls wire.CheckFinite (which
// names the culprit) only when something is found. In each 32-bit lane,
// (x & 0x7f800000) + 0x00800000 reaches bit 31 exactly when the exponent
// is all ones (NaN or ±Inf), and never carries into the next lane. Pushes
// of a 10M-float block spend this scan on the server's critical path, so
// it is worth the unsafe view (amd64 and arm64 load unaligned words).
func checkFinite(v []float32) error {
	const (
		mask  = 0x7f8000007f800000
		carry = 0x0080000000800000
		high  = 0x8000000080000000
	)
	n := len(v) &^ 7
	var bad uint64
	if n > 0 {
		u := unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), n/2)
		for i := 0; i+4 <= len(u); i += 4 {
			bad |= (u[i]&mask + carry) | (u[i+1]&mask + carry) | (u[i+2]&mask + carry) | (u[i+3]&mask + carry)
		}
	}
	if bad&high != 0 {
		return wire.CheckFinite(v)
	}
	return wire.CheckFinite(v[n:])
}
