package wire

import (
	"errors"
	"fmt"
)

// Validation and connection errors. Every decode failure wraps exactly one of
// the first group, so callers (and the Stats counters) can classify it with
// errors.Is. A connection that returned any of them is closed and never
// reused: after a bad frame the stream position is unknown.
var (
	// ErrBadMagic: the frame does not start with "PCR".
	ErrBadMagic = errors.New("wire: bad magic")
	// ErrVersion: the protocol version byte is not Version.
	ErrVersion = errors.New("wire: unsupported protocol version")
	// ErrBadType: the message type is not one this version defines.
	ErrBadType = errors.New("wire: unknown message type")
	// ErrReserved: a reserved header field or flag bit is not zero.
	ErrReserved = errors.New("wire: reserved header bits set")
	// ErrTooLarge: the payload length exceeds the configured maximum.
	ErrTooLarge = errors.New("wire: frame too large")
	// ErrLength: the header's lengths contradict each other (payload length
	// is not 4×count for a float message, or a Pull carries a payload).
	ErrLength = errors.New("wire: inconsistent lengths")
	// ErrTruncated: the stream or buffer ended inside a frame.
	ErrTruncated = errors.New("wire: truncated frame")
	// ErrPayload: the frame's payload fields do not fit its type (floats on
	// a byte message, bytes on a float message); returned when encoding.
	ErrPayload = errors.New("wire: payload does not match message type")
	// ErrProtocol: a well-formed frame arrived where the protocol does not
	// allow it (a reply to an unknown request, a second Hello).
	ErrProtocol = errors.New("wire: protocol violation")
	// ErrUnauthenticated: the first frame was not a Hello carrying the
	// shared token.
	ErrUnauthenticated = errors.New("wire: unauthenticated")
	// ErrNonFinite: CheckFinite found a NaN or an infinity.
	ErrNonFinite = errors.New("wire: non-finite value")
	// ErrClosed: the connection was closed (locally or by a previous error).
	ErrClosed = errors.New("wire: connection closed")
	// ErrSlowPeer: the peer let MaxQueuedNotices one-way frames pile up
	// unread, so its connection was closed.
	ErrSlowPeer = errors.New("wire: peer not reading its notices; connection closed")
)

// ErrorCode is the machine-readable code carried by an Error frame (in the
// header's Extra field). Codes are part of the protocol; never renumber them.
type ErrorCode uint64

const (
	CodeUnknown         ErrorCode = 0 // unclassified
	CodeBadFrame        ErrorCode = 1 // the frame failed validation; the sender closes the connection
	CodeUnauthenticated ErrorCode = 2 // missing Hello or wrong token; the connection is closed
	CodeBadRequest      ErrorCode = 3 // well-formed but not valid here (shard, offset, count out of range)
	CodeNonFinite       ErrorCode = 4 // a pushed value is NaN or ±Inf; nothing was applied
	CodeUnavailable     ErrorCode = 5 // not ready yet or overloaded; retry later
	CodeInternal        ErrorCode = 6 // the handler failed
	CodeShuttingDown    ErrorCode = 7 // the peer is stopping; do not retry on this connection
	CodeProtocol        ErrorCode = 8 // a frame arrived out of order (second Hello, unexpected type)
)

var codeNames = [...]string{"unknown", "bad_frame", "unauthenticated", "bad_request",
	"non_finite", "unavailable", "internal", "shutting_down", "protocol"}

func (c ErrorCode) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", uint64(c))
}

// RemoteError is an Error frame received from the peer (Conn.Call returns it)
// or an error a Handler returns to choose the code sent back.
type RemoteError struct {
	Code    ErrorCode
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("wire: remote error %s: %s", e.Code, e.Message)
}

// CodeOf maps an error to the code a server sends for it: a RemoteError's own
// code, the matching code for this package's sentinels, CodeInternal
// otherwise.
func CodeOf(err error) ErrorCode {
	var re *RemoteError
	switch {
	case err == nil:
		return CodeUnknown
	case errors.As(err, &re):
		return re.Code
	case errors.Is(err, ErrNonFinite):
		return CodeNonFinite
	case errors.Is(err, ErrUnauthenticated):
		return CodeUnauthenticated
	case errors.Is(err, ErrProtocol):
		return CodeProtocol
	case isDecodeError(err):
		return CodeBadFrame
	}
	return CodeInternal
}

// decodeKinds lists the decode sentinels in the order of Stats.DecodeErrors.
var decodeKinds = [...]error{ErrBadMagic, ErrVersion, ErrBadType, ErrReserved,
	ErrTooLarge, ErrLength, ErrTruncated}

// DecodeErrorKinds names the entries of Stats.DecodeErrors, in order.
var DecodeErrorKinds = [len(decodeKinds)]string{"bad_magic", "version", "bad_type",
	"reserved", "too_large", "length", "truncated"}

func decodeKind(err error) int {
	for i, k := range decodeKinds {
		if errors.Is(err, k) {
			return i
		}
	}
	return -1
}

func isDecodeError(err error) bool { return decodeKind(err) >= 0 }
