package wire

import "sync/atomic"

// Stats counts a data plane's traffic and failures. Fields are updated
// atomically and may be read at any time; the metrics layer exports them.
// The zero value is ready to use.
type Stats struct {
	FramesIn, FramesOut atomic.Uint64
	BytesIn, BytesOut   atomic.Uint64 // headers included
	Accepted            atomic.Uint64 // connections accepted (server) or dialled (client)
	AuthFailures        atomic.Uint64 // connections refused: no Hello, wrong token, refused Hello
	HandlerErrors       atomic.Uint64 // Handler calls that returned an error (sent back as Error frames)
	RemoteErrors        atomic.Uint64 // Error frames received in reply to Calls
	IOErrors            atomic.Uint64 // connections lost to read/write errors or timeouts
	ProtocolErrors      atomic.Uint64 // well-formed frames the protocol does not allow here
	Unroutable          atomic.Uint64 // notifications received with no OnNotify to take them
	// DecodeErrors counts malformed frames by kind, indexed like
	// DecodeErrorKinds (bad_magic, version, bad_type, reserved, too_large,
	// length, truncated).
	DecodeErrors [len(decodeKinds)]atomic.Uint64
}

// StatsSnapshot is a plain copy of Stats at one moment.
type StatsSnapshot struct {
	FramesIn, FramesOut, BytesIn, BytesOut              uint64
	Accepted, AuthFailures, HandlerErrors, RemoteErrors uint64
	IOErrors, ProtocolErrors, Unroutable                uint64
	DecodeErrors                                        map[string]uint64
}

// Snapshot copies the counters.
func (s *Stats) Snapshot() StatsSnapshot {
	snap := StatsSnapshot{
		FramesIn: s.FramesIn.Load(), FramesOut: s.FramesOut.Load(),
		BytesIn: s.BytesIn.Load(), BytesOut: s.BytesOut.Load(),
		Accepted: s.Accepted.Load(), AuthFailures: s.AuthFailures.Load(),
		HandlerErrors: s.HandlerErrors.Load(), RemoteErrors: s.RemoteErrors.Load(),
		IOErrors: s.IOErrors.Load(), ProtocolErrors: s.ProtocolErrors.Load(),
		Unroutable:   s.Unroutable.Load(),
		DecodeErrors: make(map[string]uint64, len(decodeKinds)),
	}
	for i, name := range DecodeErrorKinds {
		snap.DecodeErrors[name] = s.DecodeErrors[i].Load()
	}
	return snap
}

// countError files a connection-ending error under the right counter.
func (s *Stats) countError(err error) {
	if k := decodeKind(err); k >= 0 {
		s.DecodeErrors[k].Add(1)
		return
	}
	s.IOErrors.Add(1)
}

func (s *Stats) in(n int)  { s.FramesIn.Add(1); s.BytesIn.Add(uint64(n)) }
func (s *Stats) out(n int) { s.FramesOut.Add(1); s.BytesOut.Add(uint64(n)) }
