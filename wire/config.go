package wire

import (
	"errors"
	"fmt"
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
	// FrameTimeout bounds how long a frame's payload may take to arrive
	// once its header has; idle time between frames is not limited (the
	// coordinator's heartbeats judge liveness). Zero: 30 s.
	FrameTimeout time.Duration
	// WriteTimeout bounds each frame write and flush. Zero: 30 s.
	WriteTimeout time.Duration
	// CallTimeout bounds a Call whose context has no deadline; a negative
	// value disables it. Zero: 30 s.
	CallTimeout time.Duration
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
		FrameTimeout:     30 * time.Second,
		WriteTimeout:     30 * time.Second,
		CallTimeout:      30 * time.Second,
	}
}

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
	if c.CallTimeout == 0 {
		c.CallTimeout = d.CallTimeout
	}
	if c.Stats == nil {
		c.Stats = new(Stats)
	}
	return c
}
