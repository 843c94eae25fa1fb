package zipline

import (
	"math/rand/v2"
	"slices"
)

// randomTimes draws a small valid input. Three shapes, picked at random:
// small integers (many ties within and across workers, so tie rules are
// exercised and spans compare exactly), arbitrary floats, and the paper's
// arithmetic predictions with intervals from a small set (equal times across
// workers).
func randomTimes(rng *rand.Rand, maxN, maxR int) [][]float64 {
	n := 1 + rng.IntN(maxN)
	times := make([][]float64, n)
	shape := rng.IntN(3)
	for p := range times {
		r := 1 + rng.IntN(maxR)
		row := make([]float64, r)
		switch shape {
		case 0:
			for i := range row {
				row[i] = float64(rng.IntN(10))
			}
			slices.Sort(row)
		case 1:
			t := rng.Float64() * 3
			for i := range row {
				t += rng.Float64() * 2
				row[i] = t
			}
		default:
			ip := float64(1 + rng.IntN(4))
			tb := float64(rng.IntN(3))
			for i := range row {
				row[i] = tb + float64(i+1)*ip
			}
		}
		times[p] = row
	}
	return times
}
