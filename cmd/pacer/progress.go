package main

import (
	"fmt"
	"io"
	"os"
	"time"
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
