package runstats

import (
	"fmt"
	"slices"
	"strings"
)

// Mode is how a run ran, as its record says and as a command is asked to
// run it.
type Mode string

// The modes.
const (
	Sim     Mode = "sim"     // timing only, no model (deterministic)
	Virtual Mode = "virtual" // real training in simulated cluster time (deterministic)
	Inproc  Mode = "inproc"  // the live runtime in this process, wall clock
	TCP     Mode = "tcp"     // the live runtime as processes on loopback, wall clock
)

// Live is whether m runs the live runtime, in real time.
func (m Mode) Live() bool { return m == Inproc || m == TCP }

// ParseMode reads a mode that must be one of valid, naming them when it
// is not.
func ParseMode(s string, valid ...Mode) (Mode, error) {
	m := Mode(s)
	if slices.Contains(valid, m) {
		return m, nil
	}
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	return "", fmt.Errorf("mode %q: valid modes are %s", s, strings.Join(names, ", "))
}
