// Package ratelog logs the lines a peer's input can trigger (a refused
// frame, a refused hello, a version skip) at a bounded rate, so that one
// connection sending bad frames in a loop cannot fill a disk or drown the
// lines that matter: without it, 200,000 refused pulls wrote 200,000 WARN
// lines (31.8 MB) in 1.7 s.
//
// # Use
//
// Wrap the process's slog.Logger once and log peer-driven lines through
// the wrapper; lines the process decides on its own (startup, checkpoints)
// keep using the plain logger:
//
//	rl := ratelog.New(log, ratelog.Limits{})
//	rl.Warn("refused request", "peer", addr, "err", err)
//
// Lines are limited per message (level and text; attributes do not count),
// so a flood of one kind does not silence the others. Each message may log
// Burst lines at once and one more per Every after that; the next line let
// through after a gap carries suppressed=N, the number of lines dropped
// since the previous one. Over any window of length T a message therefore
// logs at most Burst + T/Every + 1 lines. Suppressed() counts every
// dropped line, for a metric.
//
// The limiter takes its clock from Limits.Now (time.Now when nil), so tests
// assert the bound without sleeping.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Limits shape a Limiter. Zero fields take the defaults in parentheses.
type Limits struct {
	// Burst is the number of lines a message may log at once (10).
	Burst int
	// Every is the time after which a message may log one more line (1 s).
	Every time.Duration
	// Keys bounds the distinct messages tracked (256); messages beyond it
	// share one budget, so memory stays bounded whatever is logged.
	Keys int
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Default values of Limits' fields.
const (
	DefaultBurst = 10
	DefaultEvery = time.Second
	DefaultKeys  = 256
)

func (l Limits) withDefaults() Limits {
	if l.Burst <= 0 {
		l.Burst = DefaultBurst
	}
	if l.Every <= 0 {
		l.Every = DefaultEvery
	}
	if l.Keys <= 0 {
		l.Keys = DefaultKeys
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	return l
}

// Limiter is a token bucket per message. Safe for concurrent use.
type Limiter struct {
	lim        Limits
	mu         sync.Mutex
	buckets    map[string]*bucket
	overflow   bucket
	suppressed atomic.Uint64
}

type bucket struct {
	tokens  int
	last    time.Time // when tokens was last refilled
	dropped uint64    // lines dropped since the last one let through
}

// NewLimiter returns a Limiter with limits l.
func NewLimiter(l Limits) *Limiter {
	return &Limiter{lim: l.withDefaults(), buckets: map[string]*bucket{}}
}

// Allow reports whether a line of message key may be logged now, and how
// many lines of it were dropped since the last one allowed.
func (l *Limiter) Allow(key string) (ok bool, dropped uint64) {
	now := l.lim.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) < l.lim.Keys {
			b = &bucket{tokens: l.lim.Burst, last: now}
			l.buckets[key] = b
		} else {
			b = &l.overflow
			if b.last.IsZero() {
				b.tokens, b.last = l.lim.Burst, now
			}
		}
	}
	if n := now.Sub(b.last) / l.lim.Every; n > 0 {
		// Whole periods only, and the remainder kept, so the rate does
		// not depend on how often Allow is called.
		b.tokens = int(min(int64(b.tokens)+int64(n), int64(l.lim.Burst)))
		b.last = b.last.Add(n * l.lim.Every)
	} else if n < 0 {
		b.last = now // the clock went back: start the period again
	}
	if b.tokens == 0 {
		b.dropped++
		l.suppressed.Add(1)
		return false, 0
	}
	b.tokens--
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// Suppressed is the number of lines dropped so far.
func (l *Limiter) Suppressed() uint64 { return l.suppressed.Load() }

// Logger logs through a Limiter. The zero value and nil discard.
type Logger struct {
	log *slog.Logger
	lim *Limiter
}

// New wraps log with a new Limiter of limits l (log nil: discard).
func New(log *slog.Logger, l Limits) *Logger {
	return &Logger{log: log, lim: NewLimiter(l)}
}

// With returns a Logger that adds args to every line and shares this
// one's Limiter (its lines count against the same budgets).
func (r *Logger) With(args ...any) *Logger {
	if r == nil || r.log == nil {
		return r
	}
	return &Logger{log: r.log.With(args...), lim: r.lim}
}

// Limiter returns the Logger's Limiter (nil for a discarding Logger).
func (r *Logger) Limiter() *Limiter {
	if r == nil {
		return nil
	}
	return r.lim
}

// Suppressed is the number of lines the Logger's Limiter dropped.
func (r *Logger) Suppressed() uint64 {
	if r == nil || r.lim == nil {
		return 0
	}
	return r.lim.Suppressed()
}

// Log logs msg at level if the message's budget allows.
func (r *Logger) Log(level slog.Level, msg string, args ...any) {
	if r == nil || r.log == nil || !r.log.Enabled(context.Background(), level) {
		return
	}
	ok, dropped := r.lim.Allow(level.String() + "\x00" + msg)
	if !ok {
		return
	}
	if dropped > 0 {
		args = append(args, slog.Uint64("suppressed", dropped))
	}
	r.log.Log(context.Background(), level, msg, args...)
}

// Debug, Info, Warn and Error log at their level.
func (r *Logger) Debug(msg string, args ...any) { r.Log(slog.LevelDebug, msg, args...) }
func (r *Logger) Info(msg string, args ...any)  { r.Log(slog.LevelInfo, msg, args...) }
func (r *Logger) Warn(msg string, args ...any)  { r.Log(slog.LevelWarn, msg, args...) }
func (r *Logger) Error(msg string, args ...any) { r.Log(slog.LevelError, msg, args...) }
