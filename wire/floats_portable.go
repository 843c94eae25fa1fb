//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) || purego

package wire

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
)

// Portable path for big-endian hosts (and for testing with -tags purego):
// values are converted a bufio buffer at a time, still without allocating.

const nativeLE = false

func putFloats(dst []byte, f []float32) {
	for i, v := range f {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func getFloats(f []float32, src []byte) {
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func writeFloats(w *bufio.Writer, f []float32) error {
	for len(f) > 0 {
		n := min(w.Available()/4, len(f))
		if n == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			continue
		}
		buf := w.AvailableBuffer()[:4*n]
		putFloats(buf, f[:n])
		if _, err := w.Write(buf); err != nil {
			return err
		}
		f = f[n:]
	}
	return nil
}

func (rd *Reader) readFloats(f []float32, _ bool) error {
	r := rd.br
	chunk := r.Size() / 4
	for len(f) > 0 {
		n := min(chunk, len(f))
		b, err := r.Peek(4 * n)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		getFloats(f[:n], b)
		if _, err := r.Discard(4 * n); err != nil {
			return err
		}
		f = f[n:]
	}
	return nil
}
