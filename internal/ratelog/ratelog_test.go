package ratelog

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for the limiter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1000, 0)} }
func lines(b *bytes.Buffer) []string { return strings.Split(strings.TrimSpace(b.String()), "\n") }
func textLogger(b *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestFloodBounded: 200,000 lines of one message at one instant log the
// burst only; each further period lets one more through, carrying the
// count of those dropped in between.
func TestFloodBounded(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	r := New(textLogger(&buf), Limits{Burst: 5, Every: time.Second, Now: c.now})
	for i := 0; i < 200000; i++ {
		r.Warn("refused request", "i", i)
	}
	if got := len(lines(&buf)); got != 5 {
		t.Fatalf("%d lines at one instant, want the burst of 5", got)
	}
	if r.Suppressed() != 200000-5 {
		t.Errorf("suppressed %d, want %d", r.Suppressed(), 200000-5)
	}
	c.add(time.Second)
	r.Warn("refused request", "i", -1)
	r.Warn("refused request", "i", -2)
	ls := lines(&buf)
	if len(ls) != 6 || !strings.Contains(ls[5], "suppressed=199995") {
		t.Fatalf("after one period: %d lines, last %q; want 6, the last with suppressed=199995", len(ls), ls[len(ls)-1])
	}
}

// TestWindowBound: over a window of T, a message logs at most
// Burst + T/Every + 1 lines however often it is called.
func TestWindowBound(t *testing.T) {
	c := newClock()
	l := NewLimiter(Limits{Burst: 3, Every: 100 * time.Millisecond, Now: c.now})
	allowed := 0
	const T = 10 * time.Second
	for el := time.Duration(0); el < T; el += time.Millisecond {
		for k := 0; k < 7; k++ {
			if ok, _ := l.Allow("m"); ok {
				allowed++
			}
		}
		c.add(time.Millisecond)
	}
	if bound := 3 + int(T/(100*time.Millisecond)) + 1; allowed > bound || allowed < bound-2 {
		t.Errorf("%d lines in %s, want about (at most) %d", allowed, T, bound)
	}
}

// TestMessagesIndependent: one message's flood does not silence another.
func TestMessagesIndependent(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	r := New(textLogger(&buf), Limits{Burst: 2, Now: c.now})
	for i := 0; i < 100; i++ {
		r.Warn("flood")
	}
	r.Warn("other")
	r.Info("flood") // another level is another message
	if got := strings.Count(buf.String(), "msg=other"); got != 1 {
		t.Errorf("the other message logged %d times, want 1", got)
	}
	if got := strings.Count(buf.String(), "level=INFO"); got != 1 {
		t.Errorf("the info line logged %d times, want 1", got)
	}
}

// TestKeysBounded: past Keys distinct messages, the rest share one budget.
func TestKeysBounded(t *testing.T) {
	c := newClock()
	l := NewLimiter(Limits{Burst: 1, Keys: 4, Now: c.now})
	allowed := 0
	for i := 0; i < 10000; i++ {
		if ok, _ := l.Allow(fmt.Sprint("msg ", i)); ok {
			allowed++
		}
	}
	if allowed != 5 || len(l.buckets) != 4 {
		t.Errorf("%d lines allowed, %d keys tracked; want 5 (4 keys + the shared budget) and 4", allowed, len(l.buckets))
	}
}

// TestWithSharesBudget: loggers made by With count against one budget,
// and a disabled level neither logs nor counts.
func TestWithSharesBudget(t *testing.T) {
	var buf bytes.Buffer
	c := newClock()
	r := New(slog.New(slog.NewTextHandler(&buf, nil)), Limits{Burst: 2, Now: c.now})
	a, b := r.With("shard", 0), r.With("shard", 1)
	for i := 0; i < 10; i++ {
		a.Warn("x")
		b.Warn("x")
		r.Debug("hidden")
	}
	if got := len(lines(&buf)); got != 2 {
		t.Errorf("%d lines, want 2", got)
	}
	if r.Suppressed() != 18 {
		t.Errorf("suppressed %d, want 18 (debug lines are not logged at all)", r.Suppressed())
	}
	var nilLog *Logger
	nilLog.Warn("nothing") // must not panic
	New(nil, Limits{}).Warn("nothing")
}

func TestConcurrent(t *testing.T) {
	var buf syncBuf
	c := time.Unix(5, 0)
	r := New(slog.New(slog.NewTextHandler(&buf, nil)), Limits{Burst: 7, Now: func() time.Time { return c }})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				r.Warn("x")
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(buf.String(), "\n"); got != 7 || r.Suppressed() != 8000-7 {
		t.Errorf("%d lines, %d suppressed; want 7 and %d", got, r.Suppressed(), 8000-7)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
