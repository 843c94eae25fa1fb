//go:build !unix

package live

import "time"

// cpuTime is not measured here (no getrusage): benchmarks report 0.
func cpuTime() time.Duration { return 0 }
