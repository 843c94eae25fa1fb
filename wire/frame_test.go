package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// sampleFrames returns one representative frame of every message type.
func sampleFrames() []Frame {
	floats := []float32{1, -2.5, 3e-38, float32(math.Inf(1)), 0, -0.0}
	hello, _ := (&Frame{}).jsonBytes(Hello{Token: "t", Role: "worker", Worker: 3})
	return []Frame{
		{Type: MsgHello, ReqID: 1, Worker: 3, Bytes: hello},
		{Type: MsgHelloOK, ReqID: 1, Worker: 7, Bytes: []byte(`{"shards":4,"size":1000}`)},
		{Type: MsgPush, ReqID: 2, Worker: 7, Shard: 2, Offset: 1 << 40, Count: uint32(len(floats)), Tag: 99, Floats: floats},
		{Type: MsgPushAck, ReqID: 2, Worker: -1, Shard: 2, Count: 6, Tag: 100},
		{Type: MsgPull, ReqID: 3, Worker: 7, Shard: 1, Offset: 12, Count: 1 << 30, Extra: 42},
		{Type: MsgPullResp, ReqID: 3, Shard: 1, Offset: 12, Count: 3, Tag: 43, Floats: floats[:3]},
		{Type: MsgClock, Worker: 7, Tag: 12},
		{Type: MsgRelease, Worker: 7, Tag: 12, Extra: 10, Flags: 0x0f},
		{Type: MsgHeartbeat, Worker: 7, Tag: 12},
		{Type: MsgJoin, ReqID: 4, Worker: -1},
		{Type: MsgLeave, ReqID: 5, Worker: 7},
		{Type: MsgError, ReqID: 6, Worker: -1, Extra: uint64(CodeBadRequest), Bytes: []byte("offset out of range")},
		{Type: MsgShutdown, Worker: -1},
		{Type: MsgControl, ReqID: 8, Worker: 2, Bytes: []byte(`{"checkpoint":true}`)},
	}
}

func (f *Frame) jsonBytes(v any) ([]byte, error) {
	err := f.SetJSON(MsgControl, v)
	return f.Bytes, err
}

// normalize makes empty payloads comparable (nil vs empty).
func normalize(f Frame) Frame {
	if len(f.Floats) == 0 {
		f.Floats = nil
	}
	if len(f.Bytes) == 0 {
		f.Bytes = nil
	}
	return f
}

func sameFrame(a, b Frame) bool {
	a, b = normalize(a), normalize(b)
	// Compare floats bit for bit so -0 and NaN payloads count as equal.
	fa, fb := a.Floats, b.Floats
	a.Floats, b.Floats = nil, nil
	if !reflect.DeepEqual(a, b) || len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if math.Float32bits(fa[i]) != math.Float32bits(fb[i]) {
			return false
		}
	}
	return true
}

func TestRoundTripEveryType(t *testing.T) {
	seen := map[MsgType]bool{}
	for _, f := range sampleFrames() {
		seen[f.Type] = true
		b, err := AppendFrame(nil, &f, 0)
		if err != nil {
			t.Fatalf("%s: encode: %v", f.Type, err)
		}
		var got Frame
		n, err := Decode(b, &got, 0)
		if err != nil || n != len(b) {
			t.Fatalf("%s: decode: n=%d/%d err=%v", f.Type, n, len(b), err)
		}
		if !sameFrame(f, got) {
			t.Errorf("%s: slice round trip\n got %+v\nwant %+v", f.Type, got, f)
		}
		// The stream codec must produce the same bytes and frame.
		var buf bytes.Buffer
		w := NewWriter(&buf, 4096, 0)
		if n, err := w.WriteFrame(&f); err != nil || n != len(b) {
			t.Fatalf("%s: WriteFrame n=%d err=%v", f.Type, n, err)
		}
		w.Flush()
		if !bytes.Equal(buf.Bytes(), b) {
			t.Errorf("%s: stream and slice encodings differ", f.Type)
		}
		var got2 Frame
		if err := NewReader(&buf, 4096, 0).ReadFrame(&got2); err != nil || !sameFrame(f, got2) {
			t.Errorf("%s: stream round trip err=%v got %+v", f.Type, err, got2)
		}
	}
	for typ := MsgHello; typ <= maxMsgType; typ++ {
		if !seen[typ] {
			t.Errorf("no round-trip sample for %s", typ)
		}
	}
}

func TestHeaderLayout(t *testing.T) {
	f := Frame{Type: MsgPull, Flags: 3, ReqID: 0x0102030405060708, Worker: -2, Shard: 0x0a0b0c0d,
		Offset: 0x1112131415161718, Count: 0x21222324, Tag: 0x3132333435363738, Extra: 0x4142434445464748}
	b, err := AppendFrame(nil, &f, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'P', 'C', 'R', 1, 5, 3, 0, 0,
		8, 7, 6, 5, 4, 3, 2, 1,
		0xfe, 0xff, 0xff, 0xff, 0x0d, 0x0c, 0x0b, 0x0a,
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,
		0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31,
		0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41,
		0x24, 0x23, 0x22, 0x21, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("header bytes\n got % x\nwant % x", b, want)
	}
	p := Frame{Type: MsgPush, Floats: []float32{1.5}}
	b, _ = AppendFrame(nil, &p, 0)
	if got := b[HeaderSize:]; !bytes.Equal(got, []byte{0, 0, 0xc0, 0x3f}) || binary.LittleEndian.Uint32(b[48:]) != 1 {
		t.Fatalf("float payload % x, count %d", got, binary.LittleEndian.Uint32(b[48:]))
	}
}

// valid returns an encoded Push of n floats to corrupt.
func valid(t *testing.T, n int) []byte {
	t.Helper()
	f := Frame{Type: MsgPush, Floats: make([]float32, n)}
	b, err := AppendFrame(nil, &f, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMalformed(t *testing.T) {
	put32 := func(b []byte, at int, v uint32) []byte { binary.LittleEndian.PutUint32(b[at:], v); return b }
	cases := []struct {
		name string
		b    []byte
		max  int
		want error
	}{
		{"empty", nil, 0, ErrTruncated},
		{"short header", valid(t, 2)[:HeaderSize-1], 0, ErrTruncated},
		{"bad magic", append([]byte("PCX"), valid(t, 2)[3:]...), 0, ErrBadMagic},
		{"version 0", func() []byte { b := valid(t, 2); b[3] = 0; return b }(), 0, ErrVersion},
		{"version 2", func() []byte { b := valid(t, 2); b[3] = 2; return b }(), 0, ErrVersion},
		{"type 0", func() []byte { b := valid(t, 2); b[4] = 0; return b }(), 0, ErrBadType},
		{"type 15", func() []byte { b := valid(t, 2); b[4] = 15; return b }(), 0, ErrBadType},
		{"type 255", func() []byte { b := valid(t, 2); b[4] = 255; return b }(), 0, ErrBadType},
		{"reserved flag", func() []byte { b := valid(t, 2); b[5] = 0x80; return b }(), 0, ErrReserved},
		{"reserved bytes", func() []byte { b := valid(t, 2); b[7] = 1; return b }(), 0, ErrReserved},
		{"count lies high", put32(valid(t, 2), 48, 3), 0, ErrLength},
		{"count lies low", put32(valid(t, 2), 48, 1), 0, ErrLength},
		{"payload not 4k", put32(valid(t, 2), 52, 7), 0, ErrLength},
		{"pull with payload", func() []byte {
			f := Frame{Type: MsgPull, Count: 2}
			b, _ := AppendFrame(nil, &f, 0)
			return put32(append(b, 1, 2, 3, 4), 52, 4)
		}(), 0, ErrLength},
		{"payload cut short", valid(t, 4)[:HeaderSize+15], 0, ErrTruncated},
		{"payload missing", valid(t, 4)[:HeaderSize], 0, ErrTruncated},
		{"oversize", valid(t, 300), 1000, ErrTooLarge},
		{"huge length, tiny buffer", put32(put32(valid(t, 0), 48, 0x3fffffff), 52, 0xfffffffc), 0, ErrTooLarge},
		{"bytes oversize", func() []byte {
			f := Frame{Type: MsgControl, Bytes: make([]byte, 2000)}
			b, _ := AppendFrame(nil, &f, 0)
			return b
		}(), 1999, ErrTooLarge},
	}
	for _, c := range cases {
		var f Frame
		if _, err := Decode(c.b, &f, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: Decode err = %v, want %v", c.name, err, c.want)
		}
		err := NewReader(bytes.NewReader(c.b), 4096, c.max).ReadFrame(&f)
		if c.name == "empty" {
			if err != io.EOF {
				t.Errorf("empty stream: %v, want io.EOF", err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: ReadFrame err = %v, want %v", c.name, err, c.want)
		}
		if CodeOf(err) != CodeBadFrame {
			t.Errorf("%s: CodeOf = %s, want bad_frame", c.name, CodeOf(err))
		}
	}
}

func TestEncodeRefusals(t *testing.T) {
	cases := []struct {
		name string
		f    Frame
		max  int
		want error
	}{
		{"type 0", Frame{}, 0, ErrBadType},
		{"type 99", Frame{Type: 99}, 0, ErrBadType},
		{"reserved flag", Frame{Type: MsgClock, Flags: 0x10}, 0, ErrReserved},
		{"floats on control", Frame{Type: MsgControl, Floats: []float32{1}}, 0, ErrPayload},
		{"bytes on push", Frame{Type: MsgPush, Bytes: []byte{1}}, 0, ErrPayload},
		{"bytes on pull", Frame{Type: MsgPull, Bytes: []byte{1}}, 0, ErrPayload},
		{"count mismatch", Frame{Type: MsgPush, Count: 3, Floats: []float32{1}}, 0, ErrLength},
		{"too large", Frame{Type: MsgPullResp, Floats: make([]float32, 300)}, 1000, ErrTooLarge},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		w := NewWriter(&buf, 4096, c.max)
		if _, err := w.WriteFrame(&c.f); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		w.Flush()
		if buf.Len() != 0 {
			t.Errorf("%s: %d bytes written for a refused frame", c.name, buf.Len())
		}
	}
}

func TestDecodeReusesBuffers(t *testing.T) {
	b := valid(t, 1000)
	f := Frame{Floats: make([]float32, 0, 1000)}
	p := &f.Floats[:1][0]
	if _, err := Decode(b, &f, 0); err != nil {
		t.Fatal(err)
	}
	if &f.Floats[0] != p {
		t.Fatal("Decode reallocated a big-enough Floats buffer")
	}
	r := NewReader(&repeater{b: b}, 4096, 0)
	allocs := testing.AllocsPerRun(20, func() {
		if err := r.ReadFrame(&f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ReadFrame into a reused frame: %v allocs per run", allocs)
	}
}

func TestStreamMultipleFramesAndCleanEOF(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 4096, 0)
	frames := sampleFrames()
	for i := range frames {
		if _, err := w.WriteFrame(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	big := Frame{Type: MsgPullResp, Count: 10000, Floats: make([]float32, 10000)} // larger than the buffer
	for i := range big.Floats {
		big.Floats[i] = float32(i)
	}
	w.WriteFrame(&big)
	w.Flush()
	r := NewReader(&buf, 4096, 0)
	var f Frame
	for i := range frames {
		if err := r.ReadFrame(&f); err != nil || !sameFrame(f, frames[i]) {
			t.Fatalf("frame %d: err=%v", i, err)
		}
	}
	if err := r.ReadFrame(&f); err != nil || !sameFrame(f, big) {
		t.Fatalf("big frame: err=%v", err)
	}
	if err := r.ReadFrame(&f); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
}

func TestCheckFinite(t *testing.T) {
	ok := []float32{0, -0.0, 1, -1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32}
	if err := CheckFinite(ok); err != nil {
		t.Fatalf("finite values rejected: %v", err)
	}
	if err := CheckFinite(nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)} {
		v := append(append([]float32{}, ok...), bad, 1)
		err := CheckFinite(v)
		if !errors.Is(err, ErrNonFinite) || CodeOf(err) != CodeNonFinite {
			t.Errorf("%v not detected: %v", bad, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Token: "s"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{}, "Token"},
		{Config{Token: "s", MaxPayload: -1}, "MaxPayload"},
		{Config{Token: "s", MaxPayload: overLimit()}, "MaxPayload"},
		{Config{Token: "s", BufferSize: 10}, "BufferSize"},
		{Config{Token: "s", FrameTimeout: -1}, "FrameTimeout"},
	} {
		err := c.cfg.Validate()
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.field)) {
			t.Errorf("%+v: err %v does not name %s", c.cfg, err, c.field)
		}
	}
}

// repeater yields b over and over: an endless stream of one frame.
type repeater struct {
	b []byte
	i int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.i:])
	r.i = (r.i + n) % len(r.b)
	return n, nil
}

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

// TestProtocolDocExample keeps docs/protocol.md's byte-level example true.
func TestProtocolDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Skipf("docs not available: %v", err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("minimum version 42 (56 bytes, no payload):\n\n```\n"))
	block, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("example block not found in docs/protocol.md")
	}
	want, err := hex.DecodeString(strings.Join(strings.Fields(string(block)), ""))
	if err != nil {
		t.Fatal(err)
	}
	f := Frame{Type: MsgPull, ReqID: 3, Worker: 7, Shard: 1, Offset: 50, Count: 600, Extra: 42}
	got, err := AppendFrame(nil, &f, 0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("doc example\n got % x\nwant % x (%v)", got, want, err)
	}
}

// overLimit is one past MaxPayloadLimit (it wraps negative where int is 32
// bits, which Validate must refuse just the same).
func overLimit() int {
	n := MaxPayloadLimit
	n++
	return n
}

// TestLargePayloadsPastTheBuffer reads float payloads larger than the
// reader's buffer, which bypass it, between small frames that share it,
// from a source that answers in short reads; a stream cut inside such a
// payload is a truncation.
func TestLargePayloadsPastTheBuffer(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 4096, 0)
	var want []Frame
	for i, n := range []int{5000, 3, 1024, 1023, 700, 20000, 0, 511} {
		f := Frame{Type: MsgPush, Worker: int32(i), Count: uint32(n), Floats: make([]float32, n)}
		for j := range f.Floats {
			f.Floats[j] = float32(i*100000 + j)
		}
		want = append(want, f, Frame{Type: MsgHeartbeat, Worker: int32(i), Tag: uint64(i)})
	}
	for i := range want {
		if _, err := w.WriteFrame(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	whole := buf.Bytes()
	for _, src := range []struct {
		name string
		r    io.Reader
	}{
		{"whole", bytes.NewReader(whole)},
		{"halves", iotest.HalfReader(bytes.NewReader(whole))},
		{"bytes", iotest.OneByteReader(bytes.NewReader(whole))},
	} {
		r := NewReader(src.r, 4096, 0)
		var f Frame
		for i := range want {
			if err := r.ReadFrame(&f); err != nil || !sameFrame(f, want[i]) {
				t.Fatalf("%s: frame %d: err=%v", src.name, i, err)
			}
		}
		if err := r.ReadFrame(&f); err != io.EOF {
			t.Fatalf("%s: after the last frame: %v, want io.EOF", src.name, err)
		}
	}
	cut := whole[:HeaderSize+4*3000] // inside the first, 5000-float payload
	var f Frame
	if err := NewReader(iotest.HalfReader(bytes.NewReader(cut)), 4096, 0).ReadFrame(&f); !errors.Is(err, ErrTruncated) {
		t.Fatalf("payload cut past the buffer: %v, want ErrTruncated", err)
	}
}
