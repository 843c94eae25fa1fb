package main

import (
	"strings"
	"testing"
)

// TestExposureWarnings (issue 37): a plaintext listener other hosts reach
// and a short token are warned of; loopback, TLS and a long token are not.
func TestExposureWarnings(t *testing.T) {
	long := strings.Repeat("k", minTokenLen)
	for _, c := range []struct {
		listen string
		tls    bool
		token  string
		want   []string // a substring of each warning, in order
	}{
		{"127.0.0.1:7070", false, long, nil},
		{"[::1]:7070", false, long, nil},
		{"localhost:7070", false, long, nil},
		{"0.0.0.0:7070", true, long, nil},
		{"0.0.0.0:7070", false, long, []string{"without TLS"}},
		{":7070", false, long, []string{"without TLS"}},
		{"10.1.2.3:7070", false, long, []string{"without TLS"}},
		{"127.0.0.1:7070", false, "abc", []string{"3 characters"}},
		{"0.0.0.0:7070", false, "abc", []string{"without TLS", "3 characters"}},
	} {
		got := exposureWarnings(c.listen, c.tls, c.token)
		if len(got) != len(c.want) {
			t.Errorf("%s tls=%v token %d chars: %q, want %d warnings", c.listen, c.tls, len(c.token), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s tls=%v: warning %q, want it to say %q", c.listen, c.tls, got[i], w)
			}
		}
	}
}
