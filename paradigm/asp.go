package paradigm

import "time"

// freeGate releases on every push: ASP, and the paradigms whose waiting is
// done by the puller (backup workers, PSP) or by nobody (softsync). It still
// keeps clocks so every run reports its largest gap.
type freeGate struct{ gateBase }

func newFreeGate(k int) *freeGate { return &freeGate{newGateBase(k)} }

func (g *freeGate) Pushed(now time.Duration, p int, out []int) []int {
	g.c.push(p)
	return g.release(p, out)
}
func (g *freeGate) Leave(now time.Duration, p int, out []int) []int { return g.leave(p, out) }
func (g *freeGate) Join(now time.Duration, p int, out []int) []int  { return g.join(p, out) }
func (g *freeGate) SetClock(now time.Duration, p int, t int64, out []int) []int {
	return g.setClock(p, t, out)
}

// asyncAgg applies every gradient on arrival: ASP, SSP, DSSP and ElasticBSP
// inside a superstep.
type asyncAgg struct {
	v   uint64
	buf [1]Contribution
}

func newAsyncAgg() *asyncAgg { return &asyncAgg{} }

func (a *asyncAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	a.buf[0] = Contribution{ID: g.ID, Worker: g.Worker, Staleness: int64(a.v) - int64(g.Read), Weight: 1}
	a.v++
	return true, true, Apply{Version: a.v, LRScale: 1, Grads: a.buf[:]}
}

func (a *asyncAgg) Deadline() (time.Duration, bool)              { return 0, false }
func (a *asyncAgg) Tick(now time.Duration) (bool, Apply)         { return false, Apply{} }
func (a *asyncAgg) Leave(now time.Duration, p int) (bool, Apply) { return false, Apply{} }
func (a *asyncAgg) Join(now time.Duration, p int)                {}
func (a *asyncAgg) Version() uint64                              { return a.v }
func (a *asyncAgg) Dropped() int64                               { return 0 }
