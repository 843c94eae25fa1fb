package wire

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/pacer-ps/pacer/internal/hugemem"
)

// Version is the protocol version this package speaks; see docs/protocol.md
// for how it evolves.
const Version = 1

// HeaderSize is the fixed size of every frame header in bytes.
const HeaderSize = 56

// MaxHelloPayload bounds the first frame on a connection, read before the
// peer has authenticated.
const MaxHelloPayload = 64 << 10

// DefaultMaxPayload bounds a frame's payload when Config.MaxPayload is zero.
const DefaultMaxPayload = 1 << 30

// MaxPayloadLimit is the largest payload any configuration may allow (2 GiB
// − 1, so lengths fit an int on every platform).
const MaxPayloadLimit = math.MaxInt32

var magic = [3]byte{'P', 'C', 'R'}

// MsgType identifies a frame's meaning. Values are part of the protocol.
type MsgType uint8

const (
	MsgHello     MsgType = 1  // client → server, first frame: Hello JSON (token, role, worker)
	MsgHelloOK   MsgType = 2  // reply to Hello: Worker = assigned id, Bytes = job parameters
	MsgPush      MsgType = 3  // Shard, Offset, Worker, Tag = clock, Floats = gradient block
	MsgPushAck   MsgType = 4  // reply to Push: Tag = shard version after the push
	MsgPull      MsgType = 5  // Shard, Offset, Count, Extra = minimum version wanted
	MsgPullResp  MsgType = 6  // reply to Pull: Tag = version read, Floats = the block
	MsgClock     MsgType = 7  // worker → coordinator: Tag = iteration just pushed
	MsgRelease   MsgType = 8  // coordinator → worker: Tag = clock released, Extra = min version
	MsgHeartbeat MsgType = 9  // liveness, either way; Tag = sender's clock
	MsgJoin      MsgType = 10 // worker asks to (re)join a running job
	MsgLeave     MsgType = 11 // worker leaves cleanly
	MsgError     MsgType = 12 // Extra = ErrorCode, Bytes = UTF-8 message
	MsgShutdown  MsgType = 13 // peer is stopping
	MsgControl   MsgType = 14 // opaque small control payload (JSON by convention)
	maxMsgType           = MsgControl
)

var typeNames = [...]string{"", "hello", "hello_ok", "push", "push_ack", "pull", "pull_resp",
	"clock", "release", "heartbeat", "join", "leave", "error", "shutdown", "control"}

func (t MsgType) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Valid reports whether this protocol version defines t.
func (t MsgType) Valid() bool { return t >= MsgHello && t <= maxMsgType }

// CarriesFloats reports whether t's payload is raw float32 values (Push,
// PullResp); every other type carries opaque bytes (Pull carries none).
func (t MsgType) CarriesFloats() bool { return t == MsgPush || t == MsgPullResp }

// Flag bits. The low four bits belong to the application (a shard server
// may, for example, mark a partial pull); the high four are reserved and must
// be zero in version 1.
const (
	FlagsApp      uint8 = 0x0f
	flagsReserved uint8 = 0xf0
)

// Frame is one decoded or to-be-encoded message. Decoding reuses the
// capacity of Floats and Bytes, so a Frame kept per connection (or per
// worker and shard) makes steady-state traffic allocation-free.
type Frame struct {
	Type   MsgType
	Flags  uint8
	ReqID  uint64 // 0: one-way notification; otherwise matches a reply to its request
	Worker int32  // sending or addressed worker; -1 when none
	Shard  uint32
	Offset uint64 // first float of the block within the shard
	Count  uint32 // floats addressed; for Push/PullResp, 0 on encode means len(Floats)
	Tag    uint64 // version or clock (see the type's comment)
	Extra  uint64 // minimum version (Pull, Release) or ErrorCode (Error)

	Floats []float32 // payload of Push and PullResp
	Bytes  []byte    // payload of every other type
}

// Reset clears the header fields and truncates the payloads, keeping their
// capacity for reuse.
func (f *Frame) Reset() {
	fl, by := f.Floats[:0], f.Bytes[:0]
	*f = Frame{Floats: fl, Bytes: by}
}

// FloatBuf resizes f.Floats to n values, reusing its capacity when it can,
// and returns it. The contents are unspecified.
func (f *Frame) FloatBuf(n int) []float32 {
	if cap(f.Floats) < n {
		f.Floats = hugemem.Floats(n)
	}
	f.Floats = f.Floats[:n]
	return f.Floats
}

func (f *Frame) byteBuf(n int) []byte {
	if cap(f.Bytes) < n {
		f.Bytes = make([]byte, n)
	}
	f.Bytes = f.Bytes[:n]
	return f.Bytes
}

// header is the decoded fixed part of a frame.
type header struct {
	typ        MsgType
	flags      uint8
	reqID      uint64
	worker     int32
	shard      uint32
	offset     uint64
	count      uint32
	tag        uint64
	extra      uint64
	payloadLen uint32
}

// prepare checks that f can be encoded under the limit and returns its header.
func (f *Frame) prepare(maxPayload int) (header, error) {
	h := header{typ: f.Type, flags: f.Flags, reqID: f.ReqID, worker: f.Worker, shard: f.Shard,
		offset: f.Offset, count: f.Count, tag: f.Tag, extra: f.Extra}
	if !f.Type.Valid() {
		return h, fmt.Errorf("%w: %d", ErrBadType, uint8(f.Type))
	}
	if f.Flags&flagsReserved != 0 {
		return h, fmt.Errorf("%w: flags %#x", ErrReserved, f.Flags)
	}
	var n uint64
	switch {
	case f.Type.CarriesFloats():
		if len(f.Bytes) != 0 {
			return h, fmt.Errorf("%w: %s with %d bytes", ErrPayload, f.Type, len(f.Bytes))
		}
		if f.Count != 0 && int(f.Count) != len(f.Floats) {
			return h, fmt.Errorf("%w: count %d but %d floats", ErrLength, f.Count, len(f.Floats))
		}
		n = 4 * uint64(len(f.Floats))
		if n <= MaxPayloadLimit {
			h.count = uint32(len(f.Floats))
		}
	case len(f.Floats) != 0:
		return h, fmt.Errorf("%w: %s with %d floats", ErrPayload, f.Type, len(f.Floats))
	case f.Type == MsgPull && len(f.Bytes) != 0:
		return h, fmt.Errorf("%w: pull with %d bytes", ErrPayload, len(f.Bytes))
	default:
		n = uint64(len(f.Bytes))
	}
	if n > uint64(maxPayload) {
		return h, fmt.Errorf("%w: payload %d bytes, limit %d", ErrTooLarge, n, maxPayload)
	}
	h.payloadLen = uint32(n)
	return h, nil
}

func (h *header) put(b []byte) {
	_ = b[HeaderSize-1]
	copy(b[0:3], magic[:])
	b[3] = Version
	b[4] = uint8(h.typ)
	b[5] = h.flags
	binary.LittleEndian.PutUint16(b[6:], 0)
	binary.LittleEndian.PutUint64(b[8:], h.reqID)
	binary.LittleEndian.PutUint32(b[16:], uint32(h.worker))
	binary.LittleEndian.PutUint32(b[20:], h.shard)
	binary.LittleEndian.PutUint64(b[24:], h.offset)
	binary.LittleEndian.PutUint64(b[32:], h.tag)
	binary.LittleEndian.PutUint64(b[40:], h.extra)
	binary.LittleEndian.PutUint32(b[48:], h.count)
	binary.LittleEndian.PutUint32(b[52:], h.payloadLen)
}

// parseHeader validates b[:HeaderSize] completely before any payload is
// read or allocated.
func parseHeader(b []byte, maxPayload int) (header, error) {
	_ = b[HeaderSize-1]
	var h header
	if b[0] != magic[0] || b[1] != magic[1] || b[2] != magic[2] {
		return h, fmt.Errorf("%w: % x", ErrBadMagic, b[0:3])
	}
	if b[3] != Version {
		return h, fmt.Errorf("%w: %d (this side speaks %d)", ErrVersion, b[3], Version)
	}
	h.typ = MsgType(b[4])
	if !h.typ.Valid() {
		return h, fmt.Errorf("%w: %d", ErrBadType, b[4])
	}
	h.flags = b[5]
	if h.flags&flagsReserved != 0 || b[6] != 0 || b[7] != 0 {
		return h, fmt.Errorf("%w: flags %#x, reserved %#x", ErrReserved, h.flags, b[6:8])
	}
	h.reqID = binary.LittleEndian.Uint64(b[8:])
	h.worker = int32(binary.LittleEndian.Uint32(b[16:]))
	h.shard = binary.LittleEndian.Uint32(b[20:])
	h.offset = binary.LittleEndian.Uint64(b[24:])
	h.tag = binary.LittleEndian.Uint64(b[32:])
	h.extra = binary.LittleEndian.Uint64(b[40:])
	h.count = binary.LittleEndian.Uint32(b[48:])
	h.payloadLen = binary.LittleEndian.Uint32(b[52:])
	if uint64(h.payloadLen) > uint64(maxPayload) {
		return h, fmt.Errorf("%w: payload %d bytes, limit %d", ErrTooLarge, h.payloadLen, maxPayload)
	}
	switch {
	case h.typ.CarriesFloats() && uint64(h.payloadLen) != 4*uint64(h.count):
		return h, fmt.Errorf("%w: %s count %d but payload %d bytes", ErrLength, h.typ, h.count, h.payloadLen)
	case h.typ == MsgPull && h.payloadLen != 0:
		return h, fmt.Errorf("%w: pull with %d payload bytes", ErrLength, h.payloadLen)
	}
	return h, nil
}

// fill copies the header fields into f (payload handled by the caller).
func (h *header) fill(f *Frame) {
	f.Type, f.Flags, f.ReqID, f.Worker, f.Shard = h.typ, h.flags, h.reqID, h.worker, h.shard
	f.Offset, f.Count, f.Tag, f.Extra = h.offset, h.count, h.tag, h.extra
}

// AppendFrame appends f's encoding to dst. maxPayload ≤ 0 means
// DefaultMaxPayload. It is the slice counterpart of Writer.WriteFrame, for
// tests, fuzzing and tools; connections use Writer.
func AppendFrame(dst []byte, f *Frame, maxPayload int) ([]byte, error) {
	h, err := f.prepare(limit(maxPayload))
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize+int(h.payloadLen))...)
	h.put(dst[start:])
	p := dst[start+HeaderSize:]
	if h.typ.CarriesFloats() {
		putFloats(p, f.Floats)
	} else {
		copy(p, f.Bytes)
	}
	return dst, nil
}

// Decode decodes one frame from the start of b into f, reusing f's payload
// capacity (the payload is copied; f does not alias b), and returns the
// number of bytes consumed. maxPayload ≤ 0 means DefaultMaxPayload.
func Decode(b []byte, f *Frame, maxPayload int) (int, error) {
	if len(b) < HeaderSize {
		return 0, fmt.Errorf("%w: %d of %d header bytes", ErrTruncated, len(b), HeaderSize)
	}
	h, err := parseHeader(b, limit(maxPayload))
	if err != nil {
		return 0, err
	}
	end := HeaderSize + int(h.payloadLen)
	if len(b) < end {
		return 0, fmt.Errorf("%w: %d of %d payload bytes", ErrTruncated, len(b)-HeaderSize, h.payloadLen)
	}
	h.fill(f)
	p := b[HeaderSize:end]
	if h.typ.CarriesFloats() {
		getFloats(f.FloatBuf(int(h.count)), p)
		f.Bytes = f.Bytes[:0]
	} else {
		copy(f.byteBuf(len(p)), p)
		f.Floats = f.Floats[:0]
	}
	return end, nil
}

func limit(maxPayload int) int {
	if maxPayload <= 0 {
		return DefaultMaxPayload
	}
	return min(maxPayload, MaxPayloadLimit)
}
