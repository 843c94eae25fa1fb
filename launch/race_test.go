//go:build race

package launch

// raceEnabled skips the longest training test under the race detector: its
// servers and workers are separate, uninstrumented processes, so it would
// only slow the instrumented observer down.
const raceEnabled = true
