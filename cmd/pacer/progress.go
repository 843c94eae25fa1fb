package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pacer-ps/pacer/train"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports a long run on stderr (DESIGN.md, Observability): on a
// terminal, a bar with an ETA and the latest line beside it; otherwise
// plain, rate-limited lines that a log keeps. It writes nothing else, so
// no output file depends on where stderr goes.
type progress struct {
	w     io.Writer
	tty   bool
	cols  int // the terminal's width
	bar   *progressbar.ProgressBar
	last  time.Time
	every time.Duration // between plain lines
	dirty bool          // a terminal line without its newline
}

func newProgress(w io.Writer) *progress {
	pr := &progress{w: w, every: 5 * time.Second}
	if fd, ok := terminal(w); ok {
		pr.tty, pr.every, pr.cols = true, 200*time.Millisecond, 80
		if c, _, err := term.GetSize(fd); err == nil && c > 0 {
			pr.cols = c
		}
	}
	return pr
}

// terminal reports whether w is a terminal, and its descriptor.
func terminal(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// barWidth is the bar's own width; the rest of the line is the
// description, the percentage or count and [elapsed:left].
const barWidth = 24

// start shows a bar of max steps on a terminal (nothing otherwise).
// count shows "(n/max)" beside the percentage.
func (p *progress) start(max int64, count bool) {
	if !p.tty || max <= 0 {
		return
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetWidth(barWidth),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	}
	if count {
		opts = append(opts, progressbar.OptionShowCount())
	}
	p.bar = progressbar.NewOptions64(max, opts...)
}

// set moves the bar to n of its max steps.
func (p *progress) set(n int64) {
	if p.bar != nil {
		p.bar.Set64(n)
	}
}

// printf reports the run's state: the bar's description on a terminal with
// a bar, a line rewriting itself on one without, a plain line otherwise.
func (p *progress) printf(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	if p.bar != nil {
		// The bar, its figures and the description share one line.
		p.bar.Describe(clip(line, p.cols-barWidth-40))
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		if p.tty {
			fmt.Fprint(p.w, "\r\033[K"+clip(line, p.cols-1))
			p.dirty = true
		} else {
			fmt.Fprintln(p.w, line)
		}
	}
}

// done ends the bar or the terminal line.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish() // clears the bar's line
		p.bar = nil
	}
	if p.dirty {
		fmt.Fprintln(p.w)
		p.dirty = false
	}
}

// clip shortens s to n characters, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if n < 1 {
		n = 1
	}
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
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
