package paradigm

import (
	"slices"
	"time"

	"github.com/pacer-ps/pacer/paradigm/zipline"
)

// elasticGate is ElasticBSP (PARADIGMS.md §5). Between barriers every worker
// runs free; worker p is held at its barrier push (count based, so a wrong
// prediction still makes progress). When every live worker is held, the gate
// predicts each worker's next R pushes from its latest interval (or, under
// interval=mean:k, the mean of its last k) and lets the search pick the next
// barrier per worker.
type elasticGate struct {
	gateBase
	r       int
	search  Search
	solver  zipline.Solver
	barrier []int64         // the clock at which p is held
	steps   *uint64         // barriers passed (shared with local-only pullers and the Policy)
	relAt   []time.Duration // p's latest release
	ival    []float64       // p's predicted iteration interval, seconds
	nHeld   int

	// interval=mean:k: each worker's last k intervals (a ring, filled
	// lazily) whose mean ival holds; nil under interval=last.
	k    int
	hist []ivalRing

	ids   []int // live workers in id order, for one search
	ivals []float64
	times [][]float64
	idx   []int
}

func newElasticGate(k int, s Spec, steps *uint64) *elasticGate {
	g := &elasticGate{gateBase: newGateBase(k), r: s.R, search: s.Search, steps: steps,
		barrier: make([]int64, k), relAt: make([]time.Duration, k), ival: make([]float64, k)}
	if s.MeanOf > 1 {
		g.k, g.hist = s.MeanOf, make([]ivalRing, k)
	}
	for p := range g.barrier {
		g.barrier[p] = 1 // the first superstep is one BSP step: it yields the first intervals
	}
	return g
}

func (g *elasticGate) Pushed(now time.Duration, p int, out []int) []int {
	g.c.push(p)
	// The interval runs from p's release, so time held at a barrier does not
	// inflate the prediction of its next pushes.
	g.ival[p] = g.interval(p, (now - g.relAt[p]).Seconds())
	if g.c.t[p] < g.barrier[p] {
		g.relAt[p] = now
		return g.release(p, out)
	}
	g.held[p] = true
	g.nHeld++
	return g.maybeBarrier(now, out)
}

// ivalRing holds a worker's last k intervals.
type ivalRing struct {
	buf    []float64
	n, pos int
}

// interval records p's latest interval iv and returns what the predictor
// uses: iv itself, or the mean of p's last k intervals, which a single
// jittered iteration moves only by 1/k of its deviation.
func (g *elasticGate) interval(p int, iv float64) float64 {
	if g.k == 0 {
		return iv
	}
	h := &g.hist[p]
	if h.buf == nil {
		h.buf = make([]float64, g.k)
	}
	h.buf[h.pos] = iv
	h.pos = (h.pos + 1) % g.k
	h.n = min(h.n+1, g.k)
	sum := 0.0
	for _, x := range h.buf[:h.n] {
		sum += x
	}
	return sum / float64(h.n)
}

func (g *elasticGate) maybeBarrier(now time.Duration, out []int) []int {
	if g.c.nLive == 0 || g.nHeld < g.c.nLive {
		return out
	}
	g.stats.ControllerCalls++
	g.ids, g.ivals = g.ids[:0], g.ivals[:0]
	for q, l := range g.c.live {
		if l {
			g.ids = append(g.ids, q)
			g.ivals = append(g.ivals, max(g.ival[q], 1e-9))
		}
	}
	tb := now.Seconds()
	g.times = zipline.Predict(g.times, tb, g.ivals, g.r)
	g.idx = g.idx[:0]
	switch g.search {
	case SearchZipLine:
		g.idx = append(g.idx, make([]int, len(g.ids))...)
		g.solver.ZipLine(g.times, g.idx)
	case SearchGridScan:
		g.idx, _ = zipline.GridScan(g.times)
	case SearchFullGridScan:
		g.idx, _ = zipline.FullGridScan(g.times)
	case SearchBrute:
		g.idx, _ = zipline.BruteForce(g.times)
	}
	for i, q := range g.ids {
		g.barrier[q] = g.c.t[q] + int64(g.idx[i]) + 1
		g.held[q] = false
		g.relAt[q] = now
		out = g.release(q, out)
	}
	g.nHeld = 0
	*g.steps++
	return out
}

func (g *elasticGate) Leave(now time.Duration, p int, out []int) []int {
	if g.Held(p) {
		g.held[p] = false
		g.nHeld--
	}
	g.c.leave(p)
	return g.maybeBarrier(now, out)
}

func (g *elasticGate) Join(now time.Duration, p int, out []int) []int {
	for len(g.barrier) <= p {
		g.barrier, g.relAt, g.ival = append(g.barrier, 0), append(g.relAt, 0), append(g.ival, 0)
		if g.k > 0 {
			g.hist = append(g.hist, ivalRing{})
		}
	}
	if g.k > 0 { // a worker that comes back is measured afresh
		g.hist[p] = ivalRing{buf: g.hist[p].buf} // n = 0: its old intervals no longer count
	}
	out = g.join(p, out)
	g.barrier[p] = g.c.t[p] + 1
	g.relAt[p] = now
	return out
}

// superstepAgg is ElasticBSP's local-only option on one shard (PARADIGMS.md
// §5): inside a superstep the workers step their own copies, the shard only
// collects their gradients, and at the barrier it applies each gradient
// weighted by 1/(workers that contributed). With plain SGD that is exactly
// the mean of the workers' local models, and every worker then pulls it.
type superstepAgg struct {
	v        uint64
	buf, out []Contribution
	seen     []bool
	dropped  int64
}

func newSuperstepAgg(k int) *superstepAgg { return &superstepAgg{seen: make([]bool, k)} }

func (a *superstepAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	a.buf = append(a.buf, Contribution{ID: g.ID, Worker: g.Worker, Staleness: int64(a.v) - int64(g.Read)})
	return true, false, Apply{}
}

// flush applies the superstep's gradients: called by the Policy when the
// gate passes a barrier, so every shard's version counts the barriers.
func (a *superstepAgg) flush() Apply {
	n := 0
	for _, c := range a.buf {
		for len(a.seen) <= c.Worker {
			a.seen = append(a.seen, false)
		}
		if !a.seen[c.Worker] {
			a.seen[c.Worker] = true
			n++
		}
	}
	for i := range a.buf {
		a.buf[i].Weight = 1 / float64(n)
		a.seen[a.buf[i].Worker] = false
	}
	// By worker, then arrival: the sum's order (and so its rounding) does
	// not depend on how arrivals tied, and one-push supersteps apply
	// exactly what BSP applies.
	slices.SortStableFunc(a.buf, func(x, y Contribution) int { return x.Worker - y.Worker })
	a.v++
	a.out, a.buf = a.buf, a.out[:0]
	return Apply{Version: a.v, LRScale: 1, Grads: a.out}
}

func (a *superstepAgg) Deadline() (time.Duration, bool)      { return 0, false }
func (a *superstepAgg) Tick(now time.Duration) (bool, Apply) { return false, Apply{} }

// Leave keeps a departed worker's gradients of this superstep: they are
// real work, and the barrier that its leaving may cause averages them in.
func (a *superstepAgg) Leave(now time.Duration, p int) (bool, Apply) { return false, Apply{} }
func (a *superstepAgg) Join(now time.Duration, p int)                {}
func (a *superstepAgg) Version() uint64                              { return a.v }
func (a *superstepAgg) Dropped() int64                               { return a.dropped }

// SetClock moves p's clock; its barrier is its next push, so a gate
// rebuilt this way starts with one BSP step, as a new job does.
func (g *elasticGate) SetClock(now time.Duration, p int, t int64, out []int) []int {
	if p >= len(g.c.live) || !g.c.live[p] || t < 0 {
		return out
	}
	g.c.set(p, t)
	g.barrier[p] = t + 1
	return out
}
