package paradigm

import (
	"math"
	"time"
)

// Controller is DSSP's controller(p) of PARADIGMS.md §4: how many extra
// iterations r* ∈ [0, rmax] to grant the fastest worker p so that its next
// push lands closest to one of the slowest worker's next pushes.
// ap0, ap1 are p's two latest push arrivals, as0, as1 the slowest's.
// Sim_p[r] = ap0 + r·I_p (r = 0..rmax), Sim_s[k] = as0 + (k+1)·I_s
// (k = 0..rmax); r* = argmin_r min_k |Sim_s[k] − Sim_p[r]|, ties → smallest r.
// Both sequences ascend, so one forward pointer into Sim_s gives the nearest
// element for every r: O(rmax), in exact integer nanoseconds.
func Controller(ap0, ap1, as0, as1 time.Duration, rmax int) int {
	ip, is := ap0-ap1, as0-as1
	if rmax <= 0 || ip <= 0 || is <= 0 {
		return 0
	}
	simS := func(k int) time.Duration { return as0 + time.Duration(k+1)*is }
	best, bestR, k := time.Duration(math.MaxInt64), 0, 0
	for r := 0; r <= rmax; r++ {
		x := ap0 + time.Duration(r)*ip
		for k < rmax && simS(k+1) <= x {
			k++
		}
		d := absDur(simS(k) - x)
		if k < rmax {
			d = min(d, absDur(simS(k+1)-x))
		}
		if d < best {
			best, bestR = d, r
		}
	}
	return bestR
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// dsspGate is DSSP(s_L, s_U), Algorithms 1 and 2 of the DSSP paper with the
// decisions of PARADIGMS.md §4.
type dsspGate struct {
	gateBase
	sl, su int64
	mode   DSSPMode
	r      []int           // extra iterations still granted
	a0, a1 []time.Duration // arrival times of the two latest pushes
	seen   []uint8         // pushes seen, saturating at 2 (an interval needs two)

	slow    int   // cached slowest worker
	slowMin int64 // the min clock the cache was computed for (−1: none)
}

func newDSSPGate(k int, s Spec) *dsspGate {
	return &dsspGate{gateBase: newGateBase(k), sl: int64(s.SL), su: int64(s.SU), mode: s.Mode,
		r: make([]int, k), a0: make([]time.Duration, k), a1: make([]time.Duration, k),
		seen: make([]uint8, k), slowMin: -1}
}

func (g *dsspGate) Pushed(now time.Duration, p int, out []int) []int {
	// Step 1: A is updated on every push of every worker.
	g.a1[p], g.a0[p] = g.a0[p], now
	if g.seen[p] < 2 {
		g.seen[p]++
	}
	if g.c.push(p) {
		out = g.releaseHeld(out)
	}
	gap := g.c.gap(p)
	bounded := g.mode == DSSPBounded
	// Step 3: an earlier grant still runs.
	if g.r[p] > 0 {
		g.r[p]--
		if bounded && gap > g.su {
			g.hold(p, g.c.t[p]-g.su)
			return out
		}
		return g.release(p, out)
	}
	// Step 4.
	if gap <= g.sl {
		return g.release(p, out)
	}
	// Step 5: only a fastest worker may be granted extra iterations.
	if g.c.t[p] == g.c.max {
		rmax := int(g.su - g.sl)
		if bounded {
			rmax = min(rmax, int(g.su-gap))
		}
		r := 0
		if rmax > 0 {
			g.stats.ControllerCalls++
			s := g.slowest()
			if g.seen[s] >= 2 && g.seen[p] >= 2 {
				r = Controller(g.a0[p], g.a1[p], g.a0[s], g.a1[s], rmax)
			}
		}
		if r > 0 {
			if g.mode == DSSPExactFigure {
				r--
			}
			g.r[p] = r
			return g.release(p, out)
		}
	}
	// Step 6.
	g.hold(p, g.c.t[p]-g.sl)
	return out
}

// slowest is argmin t, ties broken by the latest predicted next push
// A[i][0]+I_i (a worker with no interval yet counts as latest). The members of
// the minimum clock only leave it, and the cached one is predicted to leave
// last, so the cache rarely needs the O(K) rescan.
func (g *dsspGate) slowest() int {
	c := g.c
	if g.slowMin == c.min && c.live[g.slow] && c.t[g.slow] == c.min {
		return g.slow
	}
	best, bestAt := -1, time.Duration(0)
	for q, l := range c.live {
		if !l || c.t[q] != c.min {
			continue
		}
		at := time.Duration(math.MaxInt64)
		if g.seen[q] >= 2 {
			at = g.a0[q] + (g.a0[q] - g.a1[q])
		}
		if best < 0 || at > bestAt {
			best, bestAt = q, at
		}
	}
	g.slow, g.slowMin = best, c.min
	return best
}

func (g *dsspGate) Leave(now time.Duration, p int, out []int) []int {
	if p < len(g.r) {
		g.r[p] = 0
	}
	g.slowMin = -1
	return g.leave(p, out)
}

func (g *dsspGate) Join(now time.Duration, p int, out []int) []int {
	for len(g.r) <= p {
		g.r, g.a0, g.a1, g.seen = append(g.r, 0), append(g.a0, 0), append(g.a1, 0), append(g.seen, 0)
	}
	g.r[p], g.seen[p] = 0, 0
	g.slowMin = -1
	return g.join(p, out)
}
