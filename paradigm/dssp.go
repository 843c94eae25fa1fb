package paradigm

import (
	"math"
	"slices"
	"time"
)

// Controller is DSSP's controller(p) of PARADIGMS.md §4: how many extra
// iterations r* ∈ [0, rmax] to grant the fastest worker p so that its next
// push lands closest to one of the slowest worker's next pushes.
// ap0 is where p's simulated pushes start (its push, or the end of a
// wait=next hold) and ap0 − ap1 is I_p; as0 is the slowest's latest push
// and as0 − as1 is I_s. Each interval is as the interval option measures it
// (release to push, or push to push), so ap1 and as1 need not be pushes.
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
	sl, su   int64
	mode     DSSPMode
	wait     DSSPWait
	interval DSSPInterval
	r        []int           // extra iterations still granted
	a0       []time.Duration // arrival time of the latest push (A[p][0])
	ival     []time.Duration // latest iteration interval, as the interval option measures it
	relAt    []time.Duration // time of the latest release
	seen     []uint8         // pushes seen, saturating at 2 (an interval needs two)

	slow    int   // cached slowest worker
	slowMin int64 // the min clock the cache was computed for (−1: none)

	// wait=next: waiters[s] are the holds that end at worker s's next push
	// (or when s leaves); spare is a reused list.
	waiters [][]holdRef
	spare   []holdRef
}

type holdRef struct {
	p   int32
	gen uint32 // the hold's number (holdGens): a stale ref is skipped
}

func newDSSPGate(k int, s Spec) *dsspGate {
	return &dsspGate{gateBase: newGateBase(k), sl: int64(s.SL), su: int64(s.SU),
		mode: s.Mode, wait: s.Wait, interval: s.Interval,
		r: make([]int, k), a0: make([]time.Duration, k), ival: make([]time.Duration, k),
		relAt: make([]time.Duration, k), seen: make([]uint8, k), slowMin: -1,
		waiters: make([][]holdRef, k)}
}

func (g *dsspGate) Pushed(now time.Duration, p int, out []int) []int {
	start := len(out)
	// Step 1: A is updated on every push of every worker. The interval
	// runs from the release that started this iteration (PARADIGMS.md's
	// definition: steps ① to ④), or under interval=push from the previous
	// push, so that it includes any time p was held.
	if g.interval == DSSPIntervalPush {
		g.ival[p] = now - g.a0[p]
	} else {
		g.ival[p] = now - g.relAt[p]
	}
	g.a0[p] = now
	if g.seen[p] < 2 {
		g.seen[p]++
	}
	moved := g.c.push(p)
	if g.wait == DSSPWaitSL {
		if moved {
			out = g.releaseHeld(out)
		}
	} else {
		out = g.wake(now, p, out)
	}
	// Step 3: an earlier grant still runs.
	if g.r[p] > 0 {
		g.r[p]--
		if g.mode == DSSPBounded && g.c.gap(p) > g.su {
			g.holdUntil(p, g.c.t[p]-g.su)
		} else {
			out = g.release(p, out)
		}
	} else {
		out = g.decide(now, p, out)
	}
	g.stamp(now, out[start:])
	return out
}

// decide is steps 4 to 6 for p with no grant left, p's iteration ending at
// now: at its own push, or when a wait=next hold ends (p is then treated as
// having just pushed, so the controller may grant again).
func (g *dsspGate) decide(now time.Duration, p int, out []int) []int {
	gap := g.c.gap(p)
	// Step 4.
	if gap <= g.sl {
		return g.release(p, out)
	}
	// Step 5: only a fastest worker may be granted extra iterations.
	if g.c.t[p] == g.c.max {
		rmax := int(g.su - g.sl)
		if g.mode == DSSPBounded {
			rmax = min(rmax, int(g.su-gap))
		}
		r := 0
		if rmax > 0 {
			g.stats.ControllerCalls++
			s := g.slowest()
			if g.seen[s] >= 2 && g.seen[p] >= 2 {
				// Sim_p[0] is now: p's push, or the end of its hold.
				r = Controller(now, now-g.ival[p], g.a0[s], g.a0[s]-g.ival[s], rmax)
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
	g.holdUntil(p, g.c.t[p]-g.sl)
	return out
}

// holdUntil holds p by the wait rule: under wait=sl until the minimum clock
// reaches need, under wait=next until the slowest worker's next push.
func (g *dsspGate) holdUntil(p int, need int64) {
	if g.wait == DSSPWaitSL {
		g.hold(p, need)
		return
	}
	s := g.slowest()
	g.held[p] = true
	g.waiters[s] = append(g.waiters[s], holdRef{int32(p), g.gens.next(p)})
}

// wake ends the wait=next holds on s (it pushed or left), in worker order,
// and decides again for each.
func (g *dsspGate) wake(now time.Duration, s int, out []int) []int {
	list := g.waiters[s]
	if len(list) == 0 {
		return out
	}
	g.waiters[s] = g.spare[:0] // a decision may hold a worker on s again
	slices.SortFunc(list, func(a, b holdRef) int { return int(a.p) - int(b.p) })
	for _, h := range list {
		if !g.gens.live(g.held, h.p, h.gen) {
			continue // p left (and maybe rejoined) since
		}
		p := int(h.p)
		g.held[p], g.r[p] = false, 0
		out = g.decide(now, p, out)
	}
	g.spare = list[:0]
	return out
}

// stamp records the release time of the workers just released: the start
// of their next iteration interval.
func (g *dsspGate) stamp(now time.Duration, rel []int) {
	for _, q := range rel {
		g.relAt[q] = now
	}
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
			at = g.a0[q] + g.ival[q]
		}
		if best < 0 || at > bestAt {
			best, bestAt = q, at
		}
	}
	g.slow, g.slowMin = best, c.min
	return best
}

// Leave removes p; the workers whose wait=next hold waited on p decide
// again against the workers that remain (nobody waits for a dead worker).
func (g *dsspGate) Leave(now time.Duration, p int, out []int) []int {
	start := len(out)
	if p < len(g.r) {
		g.r[p] = 0
	}
	g.slowMin = -1
	out = g.leave(p, out)
	if p < len(g.waiters) {
		out = g.wake(now, p, out)
	}
	g.stamp(now, out[start:])
	return out
}

func (g *dsspGate) Join(now time.Duration, p int, out []int) []int {
	for len(g.r) <= p {
		g.r, g.a0, g.ival, g.relAt = append(g.r, 0), append(g.a0, 0), append(g.ival, 0), append(g.relAt, 0)
		g.seen, g.waiters = append(g.seen, 0), append(g.waiters, nil)
	}
	g.r[p], g.seen[p] = 0, 0
	g.slowMin = -1
	start := len(out)
	out = g.join(p, out)
	g.stamp(now, out[start:])
	return out
}

// SetClock moves p's clock; workers held on it (wait=next) decide again,
// as at its push.
func (g *dsspGate) SetClock(now time.Duration, p int, t int64, out []int) []int {
	start := len(out)
	g.slowMin = -1
	out = g.setClock(p, t, out)
	if p < len(g.waiters) && g.c.live[p] {
		out = g.wake(now, p, out)
	}
	g.stamp(now, out[start:])
	return out
}
