package wire

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Config holds the settings shared by servers and clients. Zero means
// "default" for every field; DefaultConfig shows the values.
type Config struct {
	// Token is the shared secret every connection presents in its Hello.
	// Required (no default): an unauthenticated data plane is not offered.
	Token string
	// MaxPayload bounds every frame's payload in bytes, both ways. Zero:
	// DefaultMaxPayload (1 GiB). At most MaxPayloadLimit.
	MaxPayload int
	// BufferSize is the bufio size of each direction. Zero: 256 KiB.
	BufferSize int
	// HandshakeTimeout bounds the time from accept (or dial) to an
	// authenticated Hello, TLS handshake included. Zero: 10 s.
	HandshakeTimeout time.Duration
	// HelloTimeout bounds, on a server, the time from accept to the
	// Hello's arrival, TLS handshake included, when shorter than
	// HandshakeTimeout: a client sends its Hello as soon as it has
	// connected, so only a silent connection waits that long, and the
	// slot it holds (MaxPending) frees soon. Zero: 3 s.
	HelloTimeout time.Duration
	// FrameTimeout bounds how long a frame may take to arrive once it has
	// begun (a server counts from its first byte, a client from its
	// header); idle time between frames is not limited (the coordinator's
	// heartbeats judge liveness). Zero: 30 s.
	FrameTimeout time.Duration
	// WriteTimeout bounds each frame write and flush. Zero: 30 s.
	WriteTimeout time.Duration
	// IdleRelease is how long a server connection may go without a frame
	// before it gives back its payload and I/O buffers (the next frame
	// allocates them again); negative: never. Zero: 5 s.
	IdleRelease time.Duration
	// CallTimeout bounds a Call whose context has no deadline; a negative
	// value disables it. Zero: 30 s.
	CallTimeout time.Duration
	// MaxPending bounds a server's connections that have not yet
	// authenticated (accepted, Hello not yet checked): beyond it a new
	// connection is closed at once, counted in Stats.PendingRefused and
	// reported to Hooks.PendingRefused. Each costs a goroutine and its
	// buffers for up to HandshakeTimeout, so without a cap anyone who can
	// reach the port could hold any number of them. Authenticated
	// connections are bounded by the roles (one per worker id). Zero:
	// DefaultMaxPending.
	MaxPending int
	// MaxPendingPerAddr bounds the unauthenticated connections from one
	// IP address (TCP; other transports are one process), so that one
	// address flooding the server with silent connections cannot hold
	// every MaxPending slot while workers from others wait. Zero: a
	// quarter of MaxPending, but at least 8 (all of them when fewer).
	MaxPendingPerAddr int
	// Stats receives the counters; several connections (a worker's one per
	// shard) may share one. Nil: a private Stats per Server or Conn.
	Stats *Stats
}

// DefaultConfig returns a Config with every default filled in (Token
// still empty).
func DefaultConfig() Config {
	return Config{
		MaxPayload:       DefaultMaxPayload,
		BufferSize:       DefaultBufferSize,
		HandshakeTimeout: 10 * time.Second,
		HelloTimeout:     3 * time.Second,
		FrameTimeout:     30 * time.Second,
		WriteTimeout:     30 * time.Second,
		IdleRelease:      5 * time.Second,
		CallTimeout:      30 * time.Second,
		MaxPending:       DefaultMaxPending,
	}
}

// DefaultMaxPending is Config.MaxPending's default: far more than a job's
// workers reconnecting at once (each holds a connection per shard and one
// to the coordinator), far fewer than a flood could open.
const DefaultMaxPending = 256

// Validate reports the first invalid field, naming it and its value.
func (c Config) Validate() error {
	switch {
	case c.Token == "":
		return errors.New("wire: Config.Token: must not be empty")
	case c.MaxPayload < 0 || c.MaxPayload > MaxPayloadLimit:
		return fmt.Errorf("wire: Config.MaxPayload: %d not in [0, %d]", c.MaxPayload, MaxPayloadLimit)
	case c.BufferSize < 0 || (c.BufferSize > 0 && c.BufferSize < 4096):
		return fmt.Errorf("wire: Config.BufferSize: %d, want 0 (default) or ≥ 4096", c.BufferSize)
	case c.HandshakeTimeout < 0:
		return fmt.Errorf("wire: Config.HandshakeTimeout: %v is negative", c.HandshakeTimeout)
	case c.FrameTimeout < 0:
		return fmt.Errorf("wire: Config.FrameTimeout: %v is negative", c.FrameTimeout)
	case c.WriteTimeout < 0:
		return fmt.Errorf("wire: Config.WriteTimeout: %v is negative", c.WriteTimeout)
	case c.HelloTimeout < 0:
		return fmt.Errorf("wire: Config.HelloTimeout: %v is negative", c.HelloTimeout)
	case c.MaxPending < 0:
		return fmt.Errorf("wire: Config.MaxPending: %d is negative", c.MaxPending)
	case c.MaxPendingPerAddr < 0:
		return fmt.Errorf("wire: Config.MaxPendingPerAddr: %d is negative", c.MaxPendingPerAddr)
	}
	return nil
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxPayload == 0 {
		c.MaxPayload = d.MaxPayload
	}
	if c.BufferSize == 0 {
		c.BufferSize = d.BufferSize
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	if c.FrameTimeout == 0 {
		c.FrameTimeout = d.FrameTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.IdleRelease == 0 {
		c.IdleRelease = d.IdleRelease
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = d.CallTimeout
	}
	if c.HelloTimeout == 0 {
		c.HelloTimeout = d.HelloTimeout
	}
	if c.MaxPending == 0 {
		c.MaxPending = d.MaxPending
	}
	if c.MaxPendingPerAddr == 0 {
		c.MaxPendingPerAddr = max(c.MaxPending/4, min(c.MaxPending, 8))
	}
	if c.Stats == nil {
		c.Stats = new(Stats)
	}
	return c
}

// Stats counts a data plane's traffic and failures. Fields are updated
// atomically and may be read at any time; the metrics layer exports them.
// The zero value is ready to use.
type Stats struct {
	FramesIn, FramesOut atomic.Uint64
	BytesIn, BytesOut   atomic.Uint64 // headers included
	Accepted            atomic.Uint64 // connections accepted (server) or dialled (client)
	AuthFailures        atomic.Uint64 // connections refused: no Hello, wrong token, refused Hello
	PendingRefused      atomic.Uint64 // connections closed unread: MaxPending unauthenticated ones open already
	HandlerErrors       atomic.Uint64 // Handler calls that returned an error (sent back as Error frames)
	RemoteErrors        atomic.Uint64 // Error frames received in reply to Calls
	IOErrors            atomic.Uint64 // connections lost to read/write errors or timeouts
	ProtocolErrors      atomic.Uint64 // well-formed frames the protocol does not allow here
	Unroutable          atomic.Uint64 // notifications received with no OnNotify to take them
	SlowPeers           atomic.Uint64 // connections cut off for not reading: a notice queue full, or a write timed out
	// DecodeErrors counts malformed frames by kind, indexed like
	// DecodeErrorKinds (bad_magic, version, bad_type, reserved, too_large,
	// length, truncated).
	DecodeErrors [len(decodeKinds)]atomic.Uint64
}

// StatsSnapshot is a plain copy of Stats at one moment.
type StatsSnapshot struct {
	FramesIn, FramesOut, BytesIn, BytesOut              uint64
	Accepted, AuthFailures, HandlerErrors, RemoteErrors uint64
	IOErrors, ProtocolErrors, Unroutable, SlowPeers     uint64
	PendingRefused                                      uint64
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
		Unroutable: s.Unroutable.Load(), SlowPeers: s.SlowPeers.Load(),
		PendingRefused: s.PendingRefused.Load(),
		DecodeErrors:   make(map[string]uint64, len(decodeKinds)),
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
