package paradigm

// gateBase holds what every gate shares: clocks, held flags and the counters.
type gateBase struct {
	c     *clocks
	held  []bool
	hq    holdQueue
	gens  holdGens
	stats GateStats
}

func newGateBase(k int) gateBase {
	return gateBase{c: newClocks(k), held: make([]bool, k)}
}

func (g *gateBase) Clock(p int) int64 {
	if p >= len(g.c.t) {
		return 0
	}
	return g.c.t[p]
}
func (g *gateBase) Min() int64       { return g.c.min }
func (g *gateBase) Held(p int) bool  { return p < len(g.held) && g.held[p] }
func (g *gateBase) Stats() GateStats { return g.stats }

// release records the release of p and appends it.
func (g *gateBase) release(p int, out []int) []int {
	g.stats.Releases++
	if gap := g.c.gap(p); gap > g.stats.MaxGap {
		g.stats.MaxGap = gap
	}
	return append(out, p)
}

// releaseHeld releases every held worker whose need the minimum now meets.
func (g *gateBase) releaseHeld(out []int) []int {
	start := len(out)
	out = g.hq.releaseReady(g.c.min, g.held, g.gens, out)
	for _, p := range out[start:] {
		g.stats.Releases++
		if gap := g.c.gap(p); gap > g.stats.MaxGap {
			g.stats.MaxGap = gap
		}
	}
	return out
}

func (g *gateBase) hold(p int, need int64) {
	g.held[p] = true
	g.hq.push(need, p, g.gens.next(p))
}

// leave drops p from the clocks. A hold entry of p stays in the queue; its
// number no longer matches once p is held again (holdGens).
func (g *gateBase) leave(p int, out []int) []int {
	if p < len(g.held) {
		g.held[p] = false
	}
	g.c.leave(p)
	return g.releaseHeld(out)
}

func (g *gateBase) join(p int, out []int) []int {
	g.c.join(p)
	for len(g.held) <= p {
		g.held = append(g.held, false)
	}
	g.held[p] = false
	return g.release(p, out)
}

// setClock moves live worker p to clock t (Gate.SetClock) and releases
// the holds the minimum now meets.
func (g *gateBase) setClock(p int, t int64, out []int) []int {
	if p >= len(g.c.live) || !g.c.live[p] || t < 0 {
		return out
	}
	g.c.set(p, t)
	return g.releaseHeld(out)
}
