//go:build (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego

package wire

import (
	"bufio"
	"io"
	"unsafe"
)

// On little-endian hosts the in-memory float32 layout is the wire layout, so
// payloads move as one byte slice: no per-element work and no staging copy;
// bufio passes large slices straight to the socket.

// nativeLE reports which float path this build uses (for tests and docs).
const nativeLE = true

func asBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

func putFloats(dst []byte, f []float32) { copy(dst, asBytes(f)) }

func getFloats(f []float32, src []byte) { copy(asBytes(f), src) }

func writeFloats(w *bufio.Writer, f []float32) error {
	_, err := w.Write(asBytes(f))
	return err
}

func readFloats(r *bufio.Reader, f []float32) error {
	_, err := io.ReadFull(r, asBytes(f))
	return err
}
