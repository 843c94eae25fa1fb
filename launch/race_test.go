//go:build race

package launch

// raceEnabled skips the longest training test under the race detector and
// shortens the fault matrices to three paradigms each: their servers and
// workers are separate, uninstrumented processes, so the whole matrix would
// only slow the instrumented launcher down (it runs in the plain go test).
const raceEnabled = true
