//go:build race

package live

// raceEnabled skips the tests of separate pacer processes under the race
// detector (skipUnderRace).
const raceEnabled = true
