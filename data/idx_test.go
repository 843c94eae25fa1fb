package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, payload []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(payload)
	return b.Bytes()
}

func gz(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func seq(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(i * 7)
	}
	return out
}

func TestReadIDXPlainAndGzip(t *testing.T) {
	raw := idxBytes([]int{3, 2, 5}, seq(30))
	for name, in := range map[string][]byte{"plain": raw, "gzip": gz(t, raw)} {
		t.Run(name, func(t *testing.T) {
			m, err := ReadIDX(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Dims) != 3 || m.Dims[0] != 3 || m.Dims[1] != 2 || m.Dims[2] != 5 {
				t.Fatalf("dims %v, want [3 2 5]", m.Dims)
			}
			if !bytes.Equal(m.Data, seq(30)) {
				t.Fatalf("data %v, want %v", m.Data, seq(30))
			}
		})
	}
}

func TestReadIDXRejectsMalformed(t *testing.T) {
	good := idxBytes([]int{4, 3}, seq(12))
	badGzip := gz(t, good)
	badGzip[len(badGzip)/2] ^= 0xff // flips bits in the deflate stream or its checksum
	cases := map[string][]byte{
		"empty":             {},
		"one byte":          {0},
		"short magic":       {0, 0, 8},
		"bad magic":         append([]byte{1, 2, 0x08, 2}, good[4:]...),
		"float type":        append([]byte{0, 0, 0x0d, 2}, good[4:]...),
		"rank zero":         {0, 0, 0x08, 0},
		"rank five":         idxBytes([]int{1, 1, 1, 1, 1}, []byte{0}),
		"zero dimension":    idxBytes([]int{0, 3}, nil),
		"truncated dims":    good[:6],
		"huge dims":         idxBytes([]int{1 << 16, 1 << 16}, nil),
		"short data":        good[:len(good)-1],
		"trailing data":     append(append([]byte{}, good...), 9),
		"bad gzip header":   append([]byte{0x1f, 0x8b, 0xff}, good...),
		"corrupt gzip body": badGzip,
		"truncated gzip":    gz(t, good)[:20],
		"gzip of garbage":   gz(t, []byte("not an idx file")),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ReadIDX(bytes.NewReader(in))
			if err == nil {
				t.Fatalf("ReadIDX accepted %q: dims %v", name, m.Dims)
			}
			if name != "corrupt gzip body" && name != "truncated gzip" && !errors.Is(err, ErrIDX) {
				t.Errorf("error %v does not wrap ErrIDX", err)
			}
		})
	}
}

func TestIDXLabelsOutOfRange(t *testing.T) {
	m := &IDX{Dims: []int{3}, Data: []byte{0, 9, 10}}
	if _, err := idxLabels(m, 10); err == nil || !errors.Is(err, ErrIDX) {
		t.Fatalf("label 10 of 10 classes accepted (err %v)", err)
	}
	if _, err := idxLabels(&IDX{Dims: []int{1, 3}, Data: []byte{0, 1, 2}}, 10); err == nil {
		t.Fatal("two-dimensional label file accepted")
	}
}

func TestPixelScaleInUnitInterval(t *testing.T) {
	s := pixelScale()
	if s[0] != 0 || s[255] != 1 {
		t.Fatalf("scale[0]=%v scale[255]=%v, want 0 and 1", s[0], s[255])
	}
	for i := 1; i < 256; i++ {
		if !(s[i] > s[i-1]) {
			t.Fatalf("scale not increasing at %d", i)
		}
	}
}

// FuzzReadIDX checks that arbitrary input never panics, that accepted input is consistent, and
// that the shape bounds of ReadIDXShape (the size checks before any body is read) hold. With
// compress set the input is gzipped here, so the gzip layer and its CRC are valid and every
// mutation reaches the IDX header and the checks behind it. rank, maxN, rows and cols make the
// shape: rank 0 a label file (N), otherwise images (N×rows×cols).
// Run with: go test ./data -run '^$' -fuzz FuzzReadIDX -fuzztime 40000x (scripts/fuzz-budgets)
func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, seq(8)), false, uint8(1), uint16(4), uint8(2), uint8(2))
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}), false, uint8(0), uint16(3), uint8(0), uint8(0))
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}), true, uint8(0), uint16(2), uint8(0), uint8(0))
	f.Add(idxBytes([]int{5, 2, 3}, seq(30)), true, uint8(1), uint16(4), uint8(2), uint8(3))
	f.Add(idxBytes([]int{60000, 28, 28}, nil), true, uint8(1), uint16(60000), uint8(28), uint8(28))
	f.Add(idxBytes([]int{60001, 28, 28}, nil), false, uint8(1), uint16(60000), uint8(28), uint8(28))
	f.Add(gz(f, idxBytes([]int{2, 3}, seq(6))), false, uint8(0), uint16(2), uint8(0), uint8(0))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 0}, false, uint8(0), uint16(1), uint8(0), uint8(0))
	f.Add([]byte{0x1f, 0x8b}, false, uint8(0), uint16(1), uint8(0), uint8(0))
	var zbuf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zbuf, gzip.BestSpeed) // reused: a new writer per input would dominate the run
	f.Fuzz(func(t *testing.T, in []byte, compress bool, rank uint8, maxN uint16, rows, cols uint8) {
		if compress {
			zbuf.Reset()
			zw.Reset(&zbuf)
			zw.Write(in)
			zw.Close()
			in = zbuf.Bytes()
		}
		shape := IDXShape{MaxN: int(maxN)}
		if rank%2 == 1 {
			shape.Tail = []int{int(rows), int(cols)}
		}
		m, err := ReadIDX(bytes.NewReader(in))
		dims, herr := ReadIDXHeader(bytes.NewReader(in))
		ms, serr := ReadIDXShape(bytes.NewReader(in), shape)
		if err != nil {
			if serr == nil {
				t.Fatalf("ReadIDXShape accepted what ReadIDX refused (%v)", err)
			}
			return
		}
		total := 1
		for _, d := range m.Dims {
			if d <= 0 {
				t.Fatalf("accepted dimension %d", d)
			}
			total *= d
		}
		if total != len(m.Data) {
			t.Fatalf("dims %v but %d data bytes", m.Dims, len(m.Data))
		}
		if herr != nil || fmt.Sprint(dims) != fmt.Sprint(m.Dims) {
			t.Fatalf("header alone: %v, %v; the whole file has dims %v", dims, herr, m.Dims)
		}
		fits := len(m.Dims) == 1+len(shape.Tail) && m.Dims[0] <= shape.MaxN && fmt.Sprint(m.Dims[1:]) == fmt.Sprint(shape.Tail)
		switch {
		case fits && serr != nil:
			t.Fatalf("dims %v fit %s but ReadIDXShape refused: %v", m.Dims, shape, serr)
		case !fits && serr == nil:
			t.Fatalf("dims %v exceed %s but ReadIDXShape accepted them", m.Dims, shape)
		case !fits && !errors.Is(serr, ErrIDX):
			t.Fatalf("refusal %v does not wrap ErrIDX", serr)
		case fits && !bytes.Equal(ms.Data, m.Data):
			t.Fatal("ReadIDXShape read other data than ReadIDX")
		}
	})
}
