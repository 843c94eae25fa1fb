package live

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/wire"
)

// backoff is the reconnect delay schedule: 10 ms doubling to 1 s.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, 10*time.Millisecond), time.Second)
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dialRetry dials until it connects, ctx ends or giveUp passes (zero: never).
func dialRetry(ctx context.Context, tr wire.Transport, addr string, cc wire.ClientConfig, giveUp time.Duration) (*wire.Conn, error) {
	var b backoff
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
		if giveUp > 0 && time.Since(start) > giveUp {
			return nil, err
		}
		if !sleep(ctx, b.next()) {
			return nil, ctx.Err()
		}
	}
}

// memberLink delivers the coordinator's latest membership view to one
// shard, redialling and resending until it lands. Views are complete, so
// delivering only the latest one is enough.
type memberLink struct {
	sv    *Server
	shard int
	addr  string
	wake  chan struct{}

	mu        sync.Mutex
	live, rem []int
	gen       uint64
}

func (l *memberLink) set(live, rem []int) {
	l.mu.Lock()
	l.live, l.rem = append([]int(nil), live...), append([]int(nil), rem...)
	l.gen++
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *memberLink) run(ctx context.Context) {
	var conn *wire.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	var sent uint64
	var b backoff
	var req, resp wire.Frame
	for {
		l.mu.Lock()
		gen, live, rem := l.gen, l.live, l.rem
		l.mu.Unlock()
		if gen != sent {
			var err error
			if l.shard == 0 {
				l.sv.shard.setMembers(live, rem)
			} else {
				if conn == nil {
					cc := wire.ClientConfig{Config: l.sv.cfg.Wire, Hello: wire.Hello{Role: RoleCoordinator, Worker: -1}}
					cc.Token = l.sv.cfg.Token
					conn, err = wire.Dial(ctx, l.sv.cfg.Transport, l.addr, cc)
				}
				if err == nil {
					if err = req.SetJSON(wire.MsgControl, control{Op: "members", Live: live, Removed: rem}); err == nil {
						err = conn.Call(ctx, &req, &resp)
					}
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				l.sv.log.Debug("membership link to shard failed; retrying", "shard", l.shard, "err", err)
				if conn != nil {
					conn.Close()
					conn = nil
				}
				if !sleep(ctx, b.next()) {
					return
				}
				continue
			}
			b.reset()
			sent = gen
		}
		// A restarted shard has forgotten the view: resend on reconnect,
		// which the closed connection tells us about.
		var dead <-chan struct{}
		if conn != nil {
			dead = conn.Done()
		}
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-dead:
			conn.Close()
			conn, sent = nil, 0
		}
	}
}
