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

// readFloats reads (part of) a float payload. What the buffer already
// holds is copied out; the rest of a large payload (large: at least half a
// buffer in all, so small frames still share syscalls through the buffer)
// is read from the connection straight into f. Through bufio, every read
// shorter than its buffer (each one after the socket's first partial
// answer) lands in the buffer and is copied again: measured, a tenth of a
// shard's CPU in a K = 4 round went to that copy.
func (r *Reader) readFloats(f []float32, large bool) error {
	b := asBytes(f)
	n := 0
	if k := r.br.Buffered(); k > 0 {
		n, _ = r.br.Read(b[:min(k, len(b))]) // only buffered bytes: no I/O, no error
	}
	if !large {
		_, err := io.ReadFull(r.br, b[n:])
		return err
	}
	if n == len(b) {
		return nil
	}
	// The buffer is empty here, and awaitFrame's one-byte reader (if any)
	// was drained by the header, so the source continues where it stopped.
	_, err := io.ReadFull(r.src, b[n:])
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // part of the frame was read: a truncation
	}
	return err
}
