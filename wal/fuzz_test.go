package wal

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzSegment feeds arbitrary bytes to the segment reader as the last
// segment: it must never panic nor allocate past its bounds, a record it
// accepts must encode back to the same bytes, and a torn tail must start
// after the records it returned.
func FuzzSegment(f *testing.F) {
	o, _ := Options{MaxFloats: 16, MaxInts: 4, MaxPending: 64}.withDefaults()
	var seed []byte
	seed = append(seed, encodeHeader(1, flagOrigin)...)
	for _, r := range []*Record{push(1, 2, 16), {Kind: KindBase, Read: 3, Ints: []int32{0, -2}}, {Kind: KindTick, Now: 9}} {
		seed = r.appendTo(seed)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add(seed[:segHeader])
	f.Add(seed[:20])
	bad := bytes.Clone(seed)
	bad[segHeader+12] ^= 1
	f.Add(bad)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, last := range []bool{true, false} {
			sr := &segReader{br: bufio.NewReader(bytes.NewReader(b)), size: int64(len(b)), o: o}
			var enc []byte
			r := &Record{}
			n, tornAt, err := sr.each(1, last, false, r, func(_ uint64, r *Record) error {
				if len(r.Ints) > o.MaxInts || len(r.Floats) > o.MaxFloats {
					t.Fatalf("record past the bounds: %d ints, %d floats", len(r.Ints), len(r.Floats))
				}
				enc = r.appendTo(enc)
				return nil
			})
			if cap(sr.body) > int(o.maxRecord()) {
				t.Fatalf("reader allocated %d bytes for a body, bound %d", cap(sr.body), o.maxRecord())
			}
			if err == nil && n > 0 {
				end := int64(len(b))
				if tornAt >= 0 {
					end = tornAt
				}
				if !bytes.Equal(enc, b[segHeader:end]) {
					t.Fatalf("%d records re-encode to %d bytes, the file had %d before its end", n, len(enc), end-segHeader)
				}
			}
			if !last && tornAt >= 0 {
				t.Fatal("a torn tail in a segment that is not the last")
			}
		}
	})
}
