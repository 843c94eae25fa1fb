package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Not on a terminal, progress is plain lines, at most one per interval.
func TestProgressPlainLines(t *testing.T) {
	var b bytes.Buffer
	pr := newProgress(&b)
	if pr.tty {
		t.Fatal("a buffer is no terminal")
	}
	pr.start(10, true) // no bar off a terminal
	pr.set(3)
	pr.printf("compare: %d/%d runs done", 3, 10)
	pr.printf("dropped: within the interval")
	pr.done()
	if b.String() != "compare: 3/10 runs done\n" {
		t.Errorf("got %q", b.String())
	}
}

// On a terminal, a bar with the count, the percentage, the elapsed time
// and the time left, the latest line beside it; done clears it.
func TestProgressBarOnATerminal(t *testing.T) {
	var b bytes.Buffer
	pr := &progress{w: &b, tty: true, cols: 120, every: 200 * time.Millisecond}
	pr.start(4, true)
	pr.set(1)
	pr.printf("compare: %d/%d runs done (bsp, seed 1)", 1, 4)
	time.Sleep(150 * time.Millisecond) // past the bar's throttle
	pr.set(2)
	out := b.String()
	for _, want := range []string{"compare: 1/4 runs done (bsp, seed 1)", "50%", "(2/4)", "[0s:0s]"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar %q lacks %q", out, want)
		}
	}
	pr.done()
	if last := b.String()[strings.LastIndex(b.String(), "\r"):]; strings.TrimSpace(last) != "" {
		t.Errorf("done left %q on the line", last)
	}
	pr.printf("a line after the bar")
	if !strings.HasSuffix(b.String(), "\r\033[Ka line after the bar") {
		t.Errorf("without a bar a terminal line rewrites itself: %q", b.String())
	}
}

func TestClip(t *testing.T) {
	if got := clip("épreuve", 4); got != "épr…" {
		t.Errorf("clip: %q", got)
	}
	if got := clip("abc", 3); got != "abc" {
		t.Errorf("clip: %q", got)
	}
}
