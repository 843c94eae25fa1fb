package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to both decoders. Properties: no panic;
// every failure is one of the documented sentinels; the two decoders agree;
// anything accepted re-encodes to exactly the bytes it came from.
//
//	go test -fuzz FuzzDecode -fuzztime 30s ./wire/
func FuzzDecode(f *testing.F) {
	for _, fr := range sampleFrames() {
		b, err := AppendFrame(nil, &fr, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte("PCR"))
	f.Add([]byte{})
	const max = 1 << 16 // keep the fuzzer from allocating gigabytes on lying lengths
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		n, err := Decode(b, &fr, max)
		var sr Frame
		serr := NewReader(bytes.NewReader(b), 4096, max).ReadFrame(&sr)
		if err != nil {
			if !isDecodeError(err) {
				t.Fatalf("Decode error outside the sentinel set: %v", err)
			}
			if serr == nil || (len(b) > 0 && !isDecodeError(serr)) || (len(b) == 0 && serr != io.EOF) {
				t.Fatalf("decoders disagree: Decode %v, ReadFrame %v", err, serr)
			}
			if len(b) > 0 && decodeKind(err) != decodeKind(serr) {
				t.Fatalf("decoders disagree on the kind: %v vs %v", err, serr)
			}
			return
		}
		if serr != nil || !sameFrame(fr, sr) {
			t.Fatalf("Decode accepted, ReadFrame: %v", serr)
		}
		out, err := AppendFrame(nil, &fr, max)
		if err != nil {
			t.Fatalf("decoded frame does not re-encode: %v", err)
		}
		if !bytes.Equal(out, b[:n]) {
			t.Fatalf("re-encoding differs:\n in % x\nout % x", b[:n], out)
		}
		if errors.Is(CheckFinite(fr.Floats), ErrNonFinite) == (CheckFinite(fr.Floats) == nil) {
			t.Fatal("CheckFinite inconsistent")
		}
	})
}
