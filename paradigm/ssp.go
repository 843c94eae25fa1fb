package paradigm

import "time"

// sspGate is SSP(s) (PARADIGMS.md §3); with s = 0 it is BSP's barrier, since a
// worker is then released only when every clock is equal.
type sspGate struct {
	gateBase
	s int64
}

func newSSPGate(k int, s int64) *sspGate { return &sspGate{gateBase: newGateBase(k), s: s} }

func (g *sspGate) Pushed(now time.Duration, p int, out []int) []int {
	if g.c.push(p) {
		out = g.releaseHeld(out)
	}
	if g.c.gap(p) <= g.s {
		return g.release(p, out)
	}
	g.hold(p, g.c.t[p]-g.s)
	return out
}

func (g *sspGate) Leave(now time.Duration, p int, out []int) []int { return g.leave(p, out) }
func (g *sspGate) Join(now time.Duration, p int, out []int) []int  { return g.join(p, out) }
func (g *sspGate) SetClock(now time.Duration, p int, t int64, out []int) []int {
	return g.setClock(p, t, out)
}
