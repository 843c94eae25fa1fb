package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
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

// FuzzReadIDX checks that arbitrary input never panics and that accepted input is consistent.
// Run with: go test ./data -run '^$' -fuzz FuzzReadIDX -fuzztime 30s
func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, seq(8)))
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}))
	f.Add(gz(f, idxBytes([]int{2, 3}, seq(6))))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 0})
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadIDX(bytes.NewReader(in))
		if err != nil {
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
	})
}
