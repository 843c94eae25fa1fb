package paradigm

// clocks tracks every worker's clock t_p (pushes completed) and the minimum and
// maximum over live workers. Clocks only grow by one per push, so a count per
// clock value gives the minimum in O(1) amortized without scanning workers:
// this sits on the simulator's hot path (millions of pushes per second).
type clocks struct {
	t     []int64
	live  []bool
	nLive int
	cnt   []int32 // cnt[head+i] = live workers at clock min+i
	head  int
	min   int64
	max   int64
}

func newClocks(n int) *clocks {
	c := &clocks{t: make([]int64, n), live: make([]bool, n), nLive: n, cnt: []int32{int32(n)}}
	for i := range c.live {
		c.live[i] = true
	}
	return c
}

func (c *clocks) grow(p int) {
	for len(c.t) <= p {
		c.t = append(c.t, 0)
		c.live = append(c.live, false)
	}
}

func (c *clocks) slot(t int64) int { return c.head + int(t-c.min) }

func (c *clocks) inc(t int64) {
	i := c.slot(t)
	for len(c.cnt) <= i {
		c.cnt = append(c.cnt, 0)
	}
	c.cnt[i]++
}

// push advances p's clock and reports whether the minimum moved.
func (c *clocks) push(p int) bool {
	if !c.live[p] {
		panic("paradigm: push from a worker that is not live")
	}
	c.cnt[c.slot(c.t[p])]--
	c.t[p]++
	c.inc(c.t[p])
	if c.t[p] > c.max {
		c.max = c.t[p]
	}
	return c.advance()
}

// advance moves min past empty clock values.
func (c *clocks) advance() bool {
	moved := false
	for c.nLive > 0 && c.cnt[c.head] == 0 {
		c.head++
		c.min++
		moved = true
	}
	if c.head > 64 && c.head*2 > len(c.cnt) {
		n := copy(c.cnt, c.cnt[c.head:])
		c.cnt = c.cnt[:n]
		c.head = 0
	}
	return moved
}

func (c *clocks) leave(p int) bool {
	if p >= len(c.live) || !c.live[p] {
		return false
	}
	c.live[p] = false
	c.nLive--
	c.cnt[c.slot(c.t[p])]--
	moved := c.advance()
	if c.t[p] == c.max {
		c.max = c.min
		for q, l := range c.live {
			if l && c.t[q] > c.max {
				c.max = c.t[q]
			}
		}
	}
	return moved
}

// join makes p live at the current minimum clock, so a newcomer neither holds
// the others back nor races ahead of them.
func (c *clocks) join(p int) {
	c.grow(p)
	if c.live[p] {
		return
	}
	if c.nLive == 0 {
		c.min, c.max = c.t[p], c.t[p]
		c.cnt, c.head = c.cnt[:0], 0
		c.cnt = append(c.cnt, 0)
	}
	c.live[p] = true
	c.nLive++
	c.t[p] = c.min
	c.inc(c.min)
}

func (c *clocks) gap(p int) int64 { return c.t[p] - c.min }

// set moves live worker p to clock t and recounts (O(workers + spread):
// for a restore, not the hot path).
func (c *clocks) set(p int, t int64) {
	c.t[p] = t
	c.min, c.max = 0, 0
	first := true
	for q, l := range c.live {
		if !l {
			continue
		}
		if first || c.t[q] < c.min {
			c.min = c.t[q]
		}
		if first || c.t[q] > c.max {
			c.max = c.t[q]
		}
		first = false
	}
	c.head = 0
	c.cnt = append(c.cnt[:0], make([]int32, c.max-c.min+1)...)
	for q, l := range c.live {
		if l {
			c.cnt[c.t[q]-c.min]++
		}
	}
}

// holdQueue is a min-heap of held workers keyed by the minimum clock that
// releases them; ties release in worker order so runs are deterministic.
type holdQueue []holdItem

type holdItem struct {
	need int64  // release once min clock ≥ need
	p    int32  // the held worker
	gen  uint32 // which of p's holds this entry is (see holdGens)
}

// holdGens numbers each worker's holds. An entry is live only while its
// worker is held by that same hold: a worker that leaves while held keeps its
// entry in the queue, and once it has rejoined and been held again, the old
// entry (an earlier, lower need) must not release it.
type holdGens []uint32

// next starts p's next hold and returns its number.
func (g *holdGens) next(p int) uint32 {
	for len(*g) <= p {
		*g = append(*g, 0)
	}
	(*g)[p]++
	return (*g)[p]
}

// live reports whether the entry (p, gen) is p's current hold.
func (g holdGens) live(held []bool, p int32, gen uint32) bool {
	return held[p] && g[p] == gen
}

func (h holdItem) less(o holdItem) bool {
	return h.need < o.need || (h.need == o.need && h.p < o.p)
}

func (h *holdQueue) push(need int64, p int, gen uint32) {
	*h = append(*h, holdItem{need, int32(p), gen})
	q := *h
	for i := len(q) - 1; i > 0; {
		j := (i - 1) / 2
		if !q[i].less(q[j]) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
}

func (h *holdQueue) pop() holdItem {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && q[l].less(q[m]) {
			m = l
		}
		if r := l + 1; r < n && q[r].less(q[m]) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// releaseReady pops every worker whose need is met by min and is still held
// by that entry's hold (entries of workers that left, or that have been held
// again since, are dropped), appending to out.
func (h *holdQueue) releaseReady(min int64, held []bool, gens holdGens, out []int) []int {
	for len(*h) > 0 && (*h)[0].need <= min {
		it := h.pop()
		if gens.live(held, it.p, it.gen) {
			held[it.p] = false
			out = append(out, int(it.p))
		}
	}
	return out
}
