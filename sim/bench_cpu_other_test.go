//go:build !unix

package sim

import "time"

// cpuTime is not measured here (no getrusage): benchmarks report 0.
func cpuTime() time.Duration { return 0 }
