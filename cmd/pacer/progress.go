package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pacer-ps/pacer/train"
)

// progress prints a line that rewrites itself on a terminal and plain,
// rate-limited lines otherwise (DESIGN.md, Observability).
type progress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	every time.Duration
	dirty bool
}

func newProgress(w io.Writer) *progress {
	pr := &progress{w: w, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			pr.tty, pr.every = true, 200*time.Millisecond
		}
	}
	return pr
}

func (p *progress) printf(format string, a ...any) {
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K"+format, a...)
			p.dirty = true
		} else {
			fmt.Fprintf(p.w, format+"\n", a...)
		}
	}
}

// done ends a terminal progress line.
func (p *progress) done() {
	if p.dirty {
		fmt.Fprintln(p.w)
		p.dirty = false
	}
}

// sampleRate is a virtual-time run's throughput so far: the training
// samples its workers consumed (epochs × the training set's n) per virtual
// second.
func sampleRate(p train.Progress, n int) string {
	if p.Virtual <= 0 {
		return "- samples/virtual s"
	}
	return fmt.Sprintf("%.1f samples/virtual s", p.Epoch*float64(n)/p.Virtual.Seconds())
}
