package proto

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/wire"
)

// Backoff is the reconnect delay schedule: 10 ms doubling to 1 s.
type Backoff struct{ d time.Duration }

// Next is the delay before the next attempt.
func (b *Backoff) Next() time.Duration {
	b.d = min(max(2*b.d, 10*time.Millisecond), time.Second)
	return b.d
}

// Reset starts the schedule again (after a success).
func (b *Backoff) Reset() { b.d = 0 }

// Sleep waits d or until ctx ends; it reports whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	// The pause between attempts of the redial backoffs (not a wait for
	// an event: there is none to wait for while a peer is down).
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Every calls f every d until ctx ends.
func Every(ctx context.Context, d time.Duration, f func()) {
	// The clock of the periodic event loops (heartbeats, checkpoints, the
	// coordinator's sweep): their one reading of time.
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// DialRetry dials until it connects, ctx ends or giveUp passes (zero: never).
func DialRetry(ctx context.Context, tr wire.Transport, addr string, cc wire.ClientConfig, giveUp time.Duration) (*wire.Conn, error) {
	var b Backoff
	start := time.Now()
	for {
		c, err := wire.Dial(ctx, tr, addr, cc)
		if err == nil {
			return c, nil
		}
		var re *wire.RemoteError
		if errors.As(err, &re) && (re.Code == wire.CodeUnauthenticated || re.Code == wire.CodeBadRequest || re.Code == wire.CodeShuttingDown) {
			return nil, err // retrying cannot help
		}
		if fatal := TLSSetupError(err); fatal != nil {
			return nil, fatal // nor for a setting: say which, at once
		}
		if giveUp > 0 && time.Since(start) > giveUp {
			return nil, err
		}
		if !Sleep(ctx, b.Next()) {
			return nil, ctx.Err()
		}
	}
}

// TLSSetupError returns err with a hint at the flags when it is a TLS
// setting that differs between processes (TLS on one side only, a
// certificate this side does not trust), and nil for any other error.
func TLSSetupError(err error) error {
	switch {
	case errors.Is(err, wire.ErrTLSMismatch):
		return fmt.Errorf("%w (every process of a job must agree: servers with --tls-cert/--tls-key, everything that dials with --tls or --tls-ca)", err)
	case wire.IsCertificateError(err):
		return fmt.Errorf("%w (the server's certificate is not trusted: give the CA that signed it with --tls-ca, and --tls-server-name if it names another host)", err)
	}
	return nil
}
