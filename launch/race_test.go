//go:build race

package launch

// raceEnabled skips the whole-job tests under the race detector but the
// ones that exercise its concurrency (skipUnderRace): they run in the
// plain go test.
const raceEnabled = true
