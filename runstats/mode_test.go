package runstats

import (
	"strings"
	"testing"
)

// A mode is one of those asked for, or an error that names them; only
// inproc and tcp are live.
func TestParseMode(t *testing.T) {
	if m, err := ParseMode("tcp", Inproc, TCP); err != nil || m != TCP {
		t.Errorf("tcp: %v, %v", m, err)
	}
	if _, err := ParseMode("sim", Inproc, TCP); err == nil || !strings.Contains(err.Error(), "valid modes are inproc, tcp") {
		t.Errorf("sim among the live modes: %v", err)
	}
	for m, live := range map[Mode]bool{Sim: false, Virtual: false, Inproc: true, TCP: true} {
		if m.Live() != live {
			t.Errorf("%s.Live() = %v", m, m.Live())
		}
	}
}
