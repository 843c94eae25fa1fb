package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Kind says what a record records. The log does not interpret it beyond
// checking it is one of these; the shard gives each its meaning.
type Kind uint8

const (
	KindPush    Kind = iota + 1 // an accepted gradient: Worker, Clock, Read, Now, Floats
	KindTick                    // a deadline that fired and applied: Now
	KindLeave                   // workers left (Ints), at Now
	KindJoin                    // workers joined (Ints), at Now
	KindSkip                    // the version skipped forward to Read
	KindBase                    // a segment's starting state: version Read, Clock pushes so far, Ints the live ids, then −1−id of the removed ones
	KindBarrier                 // ElasticBSP apply=local: the gate's barrier Read applied the buffered superstep
	kindEnd
)

var kindNames = [...]string{"", "push", "tick", "leave", "join", "skip", "base", "barrier"}

func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// FlagCarried marks a push record written at the head of a segment that
// carries over a gradient still buffered when the segment began (it was
// first logged in an earlier segment). A replay that starts at this
// segment takes it; one that reached the segment through the earlier one
// has it already and skips it.
const FlagCarried uint8 = 1

// Record is one logged event. Replay reuses one Record (and its slices)
// for every record it reads: copy what must outlive the callback.
type Record struct {
	Kind   Kind
	Flags  uint8
	Worker int32
	Clock  uint64
	Read   uint64
	Now    int64 // nanoseconds on the shard's clock
	Ints   []int32
	Floats []float32
}

const (
	frameHeader = 8  // len, crc
	bodyFixed   = 40 // the body before ints and floats
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// size is the encoded length of r's frame.
func (r *Record) size() int { return frameHeader + bodyFixed + 4*len(r.Ints) + 4*len(r.Floats) }

// appendTo appends r's frame to b.
func (r *Record) appendTo(b []byte) []byte {
	start := len(b)
	n := bodyFixed + 4*len(r.Ints) + 4*len(r.Floats)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, 0) // the checksum, below
	b = append(b, byte(r.Kind), r.Flags, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(r.Worker))
	b = binary.LittleEndian.AppendUint64(b, r.Clock)
	b = binary.LittleEndian.AppendUint64(b, r.Read)
	b = binary.LittleEndian.AppendUint64(b, uint64(r.Now))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Ints)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Floats)))
	for _, x := range r.Ints {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	for _, x := range r.Floats {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(b[start+frameHeader:], castagnoli))
	return b
}

// decode fills r from a body whose checksum has been verified, within the
// bounds: a well-formed body of an unknown kind, or with counts that do
// not add up to its length, is corruption all the same.
func (r *Record) decode(body []byte, maxInts, maxFloats int) error {
	if len(body) < bodyFixed {
		return fmt.Errorf("body of %d bytes, at least %d expected", len(body), bodyFixed)
	}
	k := Kind(body[0])
	if k == 0 || k >= kindEnd {
		return fmt.Errorf("unknown record kind %d", body[0])
	}
	if body[1]&^FlagCarried != 0 || body[2] != 0 || body[3] != 0 {
		return fmt.Errorf("reserved bits set (%#x %#x %#x)", body[1], body[2], body[3])
	}
	ni := uint64(binary.LittleEndian.Uint32(body[32:]))
	nf := uint64(binary.LittleEndian.Uint32(body[36:]))
	if ni > uint64(maxInts) || nf > uint64(maxFloats) {
		return fmt.Errorf("%d ints and %d floats exceed the log's bounds (%d, %d)", ni, nf, maxInts, maxFloats)
	}
	if uint64(len(body)) != bodyFixed+4*ni+4*nf {
		return fmt.Errorf("body of %d bytes holds %d ints and %d floats (%d bytes)", len(body), ni, nf, bodyFixed+4*ni+4*nf)
	}
	r.Kind, r.Flags = k, body[1]
	r.Worker = int32(binary.LittleEndian.Uint32(body[4:]))
	r.Clock = binary.LittleEndian.Uint64(body[8:])
	r.Read = binary.LittleEndian.Uint64(body[16:])
	r.Now = int64(binary.LittleEndian.Uint64(body[24:]))
	p := body[bodyFixed:]
	r.Ints = r.Ints[:0]
	for i := uint64(0); i < ni; i++ {
		r.Ints = append(r.Ints, int32(binary.LittleEndian.Uint32(p[4*i:])))
	}
	p = p[4*ni:]
	if uint64(cap(r.Floats)) < nf {
		r.Floats = make([]float32, nf)
	}
	r.Floats = r.Floats[:nf]
	for i := range r.Floats {
		r.Floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return nil
}

// ErrCorrupt is wrapped by every error about a log that is damaged other
// than at its torn tail, or that is not a log.
var ErrCorrupt = errors.New("wal: corrupt log")

// ErrTooLarge is returned by Append for a record beyond the log's bounds:
// Replay would refuse it.
var ErrTooLarge = errors.New("wal: record exceeds the log's bounds")

// ErrDropped is returned by Sync for a record that Recover dropped: it
// never reached the disk and never will.
var ErrDropped = errors.New("wal: record dropped when the log recovered from a failure")

// ErrClosed is returned by every call on a closed log.
var ErrClosed = errors.New("wal: log closed")
