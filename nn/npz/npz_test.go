package npz

import (
	"archive/zip"
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestRoundTripAndDeterminism(t *testing.T) {
	ts := []Tensor{
		{Name: "fc1.weight", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, -6.5}},
		{Name: "fc1.bias", Shape: []int{2}, Data: []float32{0.25, -1}},
		{Name: "scalar", Shape: nil, Data: []float32{7}},
	}
	var a, b bytes.Buffer
	if err := Write(&a, ts); err != nil {
		t.Fatal(err)
	}
	Write(&b, ts)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same tensors gave different bytes")
	}
	got, err := Read(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ts) {
		t.Fatalf("%d tensors read, %d written", len(got), len(ts))
	}
	for i := range ts {
		if got[i].Name != ts[i].Name || len(got[i].Shape) != len(ts[i].Shape) || len(got[i].Data) != len(ts[i].Data) {
			t.Fatalf("tensor %d: %+v, wrote %+v", i, got[i], ts[i])
		}
		for k := range ts[i].Data {
			if got[i].Data[k] != ts[i].Data[k] {
				t.Fatalf("%s[%d] = %g, wrote %g", ts[i].Name, k, got[i].Data[k], ts[i].Data[k])
			}
		}
	}
	// The header is what numpy writes: padded to 64 bytes, C order, <f4.
	h := npyHeader([]int{2})
	if len(h)%64 != 0 || !strings.Contains(string(h), "'shape': (2,)") || !strings.Contains(string(h), "'descr': '<f4'") {
		t.Errorf("header %q", h)
	}
}

func TestReadRefuses(t *testing.T) {
	if _, err := Read(bytes.NewReader([]byte("not a zip")), 9); err == nil {
		t.Error("a non-zip was read")
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	f, _ := z.Create("x.npy")
	f.Write(bytes.Replace(npyHeader([]int{1}), []byte("<f4"), []byte("<f8"), 1))
	f.Write(make([]byte, 8))
	z.Close()
	if _, err := Read(bytes.NewReader(b.Bytes()), int64(b.Len())); err == nil || !strings.Contains(err.Error(), "dtype <f8") {
		t.Errorf("a float64 array: %v", err)
	}
	if _, _, err := parseNPYHeader(bytes.NewReader(npyHeader([]int{1 << 20, 1 << 20})), "big", MaxValues); err == nil ||
		!strings.Contains(err.Error(), "at most") {
		t.Errorf("a header of 2^40 values: %v", err)
	}
}

// Open reads the headers alone: an array's values are neither read nor
// allocated until Read, and the zip's declared size must be the one the
// NPY header's shape makes (issue 37 point 7).
func TestOpenReadsHeadersOnly(t *testing.T) {
	archive := func(declared uint64, shape []int) []byte {
		h := npyHeader(shape)
		var b bytes.Buffer
		z := zip.NewWriter(&b)
		w, err := z.CreateRaw(&zip.FileHeader{Name: "w.npy", Method: zip.Store, CompressedSize64: uint64(len(h)), UncompressedSize64: declared})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(h)
		z.Close()
		return b.Bytes()
	}
	h := uint64(len(npyHeader([]int{1 << 14, 1 << 14})))
	b := archive(h+4<<28, []int{1 << 14, 1 << 14})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a, err := Open(bytes.NewReader(b), int64(len(b)))
	runtime.ReadMemStats(&after)
	if err != nil || len(a.Arrays) != 1 || a.Values() != 1<<28 || a.Arrays[0].Name != "w" {
		t.Fatalf("Open = %+v, %v", a, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("Open of a header declaring 2^28 values allocated %d bytes", got)
	}
	if _, err := a.Read(); err == nil {
		t.Error("Read of an archive without the values it declares: no error")
	}
	for _, declared := range []uint64{h, h + 4<<28 - 4, h + 4<<28 + 4} {
		b := archive(declared, []int{1 << 14, 1 << 14})
		if _, err := Open(bytes.NewReader(b), int64(len(b))); err == nil || !strings.Contains(err.Error(), "the zip declares") {
			t.Errorf("declared %d bytes for a header making %d: %v", declared, h+4<<28, err)
		}
	}
}

// An entry whose values do not match its CRC is refused, not read.
func TestReadChecksCRC(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, []Tensor{{Name: "w", Shape: []int{4}, Data: []float32{1, 2, 3, 4}}}); err != nil {
		t.Fatal(err)
	}
	// Rewrite it stored (uncompressed), so a value's byte can be flipped in place.
	z, _ := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	var st bytes.Buffer
	zw := zip.NewWriter(&st)
	f, _ := z.File[0].Open()
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "w.npy", Method: zip.Store})
	raw := new(bytes.Buffer)
	raw.ReadFrom(f)
	w.Write(raw.Bytes())
	zw.Close()
	good := st.Bytes()
	if _, err := Read(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	i := bytes.Index(bad, raw.Bytes()) + raw.Len() - 1 // the last value's last byte
	bad[i] ^= 0x40
	if _, err := Read(bytes.NewReader(bad), int64(len(bad))); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a flipped value: %v, want a checksum error", err)
	}
}
