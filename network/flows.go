package network

import (
	"math"
	"time"
)

// This file: the flows in progress and their max-min fair rates.
//
// Progressive filling saturates links one after another; every flow a link
// saturates gets that link's level. So a flow's progress is kept in the
// virtual clock of the link that holds it to its rate (its class): the
// bytes each flow of the class has received, which advances at the
// class's level. A start or an end changes the levels of a few links, and
// the flows whose class stays the same are not touched: that is what keeps
// an incast of a thousand flows into one shard cheap. For the same reason
// a flow whose worker-side link carries nothing else (a leaf) is not
// visited one by one: the leaves of a shard link are kept in groups by
// their own link's rate, each group either held by the shard link's level
// or, below it, by its own rate.

// link is one direction of an endpoint's link.
type link struct {
	rate  float64
	flows []int32 // a worker's link: every flow on it; a shard's: the flows that are not leaves
	// inl holds flows while it has room: a worker's link mostly carries
	// one flow, and then its start and end touch no memory beyond the
	// link's first cache line.
	inl   [2]int32
	nLeaf int32
	shard bool // a shard's link: it holds its leaves in groups
	group []group

	// The class of flows it holds: each has received v bytes by vat and
	// receives level bytes a second; fin orders their finishes.
	level float64
	v     float64
	vat   time.Duration
	fin   finHeap
	touch bool // its next end is to be recomputed

	// settle's scratch for solve number seen: the capacity not yet
	// given out, the flows not yet given a rate, the level it saturated at.
	seen, sat uint32
	left      float64
	n         int32
	newLevel  float64
}

// group is the leaves of a shard link whose own links have one rate.
type group struct {
	rate    float64
	flows   []int32
	capped  uint32 // solve number in which its own rate held it
	private bool   // its flows are held by their own links
}

// flow is one transfer in progress.
type flow struct {
	w, s       int32 // its worker-side and shard-side link
	posW, posS int32 // its index in w's flows and in s's flows or its group
	leaf       bool
	g          int32   // with leaf: its group in s
	class      int32   // the link that holds its rate; −1: not yet given one
	fin        float64 // its class's v at which it ends; with class −1, its bytes
	gen        uint32
	live       bool
	seen       uint32
	fixed      uint32
	next       int32 // the class settle gave it
}

// start starts a flow through worker-side link w and shard-side link s.
func (n *Net) start(now time.Duration, w, s int32, bytes int64) int32 {
	n.advance(now)
	var id int32
	if k := len(n.free); k > 0 {
		id, n.free = n.free[k-1], n.free[:k-1]
	} else {
		id = int32(len(n.flows))
		n.flows = append(n.flows, flow{})
	}
	f := &n.flows[id]
	*f = flow{w: w, s: s, class: -1, fin: float64(bytes), live: true, gen: f.gen + 1}
	W := &n.links[w]
	f.posW = int32(len(W.flows))
	W.flows = append(W.flows, id)
	if len(W.flows) == 2 {
		n.unleaf(W.flows[0])
	}
	if len(W.flows) == 1 {
		n.addLeaf(id)
	} else {
		n.addShared(id)
	}
	n.pending = append(n.pending, id)
	n.dirty = append(n.dirty, w, s)
	return id
}

// stop removes flow id, which ended at now.
func (n *Net) stop(now time.Duration, id int32) {
	n.advance(now)
	f := &n.flows[id]
	n.dropS(id)
	W := &n.links[f.w]
	last := W.flows[len(W.flows)-1]
	W.flows[f.posW] = last
	n.flows[last].posW = f.posW
	W.flows = W.flows[:len(W.flows)-1]
	if len(W.flows) == 1 {
		rest := W.flows[0]
		n.dropS(rest)
		n.addLeaf(rest)
		n.dirty = append(n.dirty, n.flows[rest].s)
		n.releaf = append(n.releaf, rest)
	}
	n.dirty = append(n.dirty, f.w, f.s)
	f.live = false
	f.gen++
	n.free = append(n.free, id)
}

// unleaf makes a leaf flow a shared one (its worker link now carries
// another).
func (n *Net) unleaf(id int32) {
	n.dropS(id)
	n.addShared(id)
	n.dirty = append(n.dirty, n.flows[id].s)
}

func (n *Net) addShared(id int32) {
	f := &n.flows[id]
	S := &n.links[f.s]
	f.leaf, f.posS = false, int32(len(S.flows))
	S.flows = append(S.flows, id)
}

func (n *Net) addLeaf(id int32) {
	f := &n.flows[id]
	S := &n.links[f.s]
	r := n.links[f.w].rate
	g := 0
	for g < len(S.group) && S.group[g].rate != r {
		g++
	}
	if g == len(S.group) {
		S.group = append(S.group, group{rate: r})
	}
	G := &S.group[g]
	f.leaf, f.g, f.posS = true, int32(g), int32(len(G.flows))
	G.flows = append(G.flows, id)
	S.nLeaf++
}

// dropS takes flow id out of its shard link's lists.
func (n *Net) dropS(id int32) {
	f := &n.flows[id]
	S := &n.links[f.s]
	list := &S.flows
	if f.leaf {
		list = &S.group[f.g].flows
		S.nLeaf--
	}
	l := *list
	last := l[len(l)-1]
	l[f.posS] = last
	n.flows[last].posS = f.posS
	*list = l[:len(l)-1]
}

// advance moves the network to now: the changes made at an earlier time
// are solved first, so that the flows ran at their rates until now.
func (n *Net) advance(now time.Duration) {
	if now < n.t {
		panic("network: time went backwards")
	}
	if now > n.t {
		n.settle()
		n.t = now
	}
}

// vAt is class c's v at t.
func (n *Net) vAt(c int32, t time.Duration) float64 {
	L := &n.links[c]
	if t == L.vat {
		return L.v // what the formula gives (v + 0), without its division
	}
	return L.v + L.level*float64(t-L.vat)/1e9
}

// setLevel changes class c's level from t on.
func (n *Net) setLevel(c int32, level float64) {
	L := &n.links[c]
	if L.level == level {
		return
	}
	L.v, L.vat, L.level = n.vAt(c, n.t), n.t, level
	n.touch(c)
}

// move puts flow id in class c at t, with the bytes it has left.
func (n *Net) move(id, c int32) {
	f := &n.flows[id]
	rem := f.fin
	if f.class >= 0 {
		rem = max(0, f.fin-n.vAt(f.class, n.t))
		n.touch(f.class)
	}
	f.class, f.fin = c, n.vAt(c, n.t)+rem
	f.gen++
	n.links[c].fin.push(fin{f.fin, id, f.gen})
	n.touch(c)
}

// touch queues class c's next end for recomputing.
func (n *Net) touch(c int32) {
	if L := &n.links[c]; !L.touch {
		L.touch = true
		n.touched = append(n.touched, c)
	}
}

// settle gives the flows connected to the links changed at t their max-min
// fair rates (progressive filling): the link (or group of leaves) with the
// smallest equal share of what is left saturates, its flows get that share
// and their other links lose it; repeat. Only the flows that share a link,
// directly or through others, with one that started or ended can change
// rate.
func (n *Net) settle() {
	if len(n.dirty) == 0 {
		n.refreshTouched()
		return
	}
	s := &n.solve
	s.num++
	num := s.num
	if w, c := n.dirty[0], n.dirty[len(n.dirty)-1]; len(n.dirty) == 2 && len(n.releaf) == 0 && n.lone(w, c) {
		// One leaf started or ended on shard link c and nothing else
		// changed: the component is c's star, as the search below would
		// find it.
		n.dirty = n.dirty[:0]
		if n.uniformStar(c) {
			return
		}
		s.links = append(s.links[:0], w, c)
		if n.links[c].nLeaf == 0 {
			c = -1
		}
		n.starAt(c, s.links, num)
		return
	}
	comp, fs := s.links[:0], s.flows[:0]
	see := func(l int32) {
		if n.links[l].seen != num {
			n.links[l].seen = num
			comp = append(comp, l)
		}
	}
	for _, l := range n.dirty {
		see(l)
	}
	n.dirty = n.dirty[:0]
	for k := 0; k < len(comp); k++ {
		L := &n.links[comp[k]]
		for _, id := range L.flows {
			f := &n.flows[id]
			if f.leaf {
				see(f.s) // a worker link's lone flow: its shard link decides
				continue
			}
			if f.seen != num {
				f.seen = num
				fs = append(fs, id)
				see(f.w)
				see(f.s)
			}
		}
	}
	if len(fs) == 0 && n.star(comp, num) {
		s.links, s.flows = comp, fs
		return
	}
	h := s.heap[:0]
	for _, l := range comp {
		L := &n.links[l]
		L.left, L.n = L.rate, int32(len(L.flows))
		if L.shard {
			L.n += L.nLeaf
			for g := range L.group {
				if len(L.group[g].flows) > 0 {
					h = append(h, share{L.group[g].rate, l, int32(g)})
				}
			}
		} else if L.n == 1 {
			L.n = 0 // a leaf's link: its shard link's group stands for it
		}
		if L.n > 0 {
			h = append(h, share{L.left / float64(L.n), l, -1})
		}
	}
	s.heap = h
	s.heapify()
	for len(s.heap) > 0 {
		e := s.pop()
		L := &n.links[e.link]
		if L.sat == num || L.n == 0 {
			continue
		}
		if e.group >= 0 {
			// These leaves' own links are slower than any share this
			// link can still give: they run at their own rate.
			G := &L.group[e.group]
			G.capped = num
			L.left = max(0, L.left-float64(len(G.flows))*G.rate)
			L.n -= int32(len(G.flows))
			continue
		}
		if now := L.left / float64(L.n); e.share != now {
			// Its share grew since (a share only grows as the filling
			// goes on): queued again at what it is now, once, rather
			// than at every flow another link fixed.
			s.push(share{now, e.link, -1})
			continue
		}
		L.sat, L.newLevel = num, e.share
		for _, id := range L.flows {
			f := &n.flows[id]
			if f.leaf || f.fixed == num {
				continue
			}
			f.fixed, f.next = num, e.link
			o := f.w
			if o == e.link {
				o = f.s
			}
			O := &n.links[o]
			O.left = max(0, O.left-e.share)
			O.n--
		}
		L.n = 0
	}
	for _, l := range comp {
		if n.links[l].sat == num {
			n.setLevel(l, n.links[l].newLevel)
		}
	}
	for _, id := range fs {
		if f := &n.flows[id]; f.next != f.class {
			n.move(id, f.next)
		}
	}
	n.placeAll(comp, num)
	s.links, s.flows = comp, fs
}

// lone reports whether worker link w carries nothing but a leaf of shard
// link c (or nothing) and c no shared flow: then {w, c} is a component.
func (n *Net) lone(w, c int32) bool {
	W, S := &n.links[w], &n.links[c]
	if W.shard || !S.shard || len(S.flows) > 0 {
		return false
	}
	switch len(W.flows) {
	case 0:
		return true
	case 1:
		f := &n.flows[W.flows[0]]
		return f.leaf && f.s == c
	}
	return false
}

// uniformStar is starAt for shard link c in its commonest case, the one
// of a network whose links have one rate: its leaves are one group that
// nothing caps, before and after (or none are left). Then every leaf runs
// at the link's share, none changes class, and at most the flow just
// started is placed: the same steps as starAt and placeAll take, without
// their searches. It reports false, having changed nothing, in any other
// case.
func (n *Net) uniformStar(c int32) bool {
	L := &n.links[c]
	if len(L.group) != 1 || L.group[0].private {
		return false
	}
	if L.nLeaf > 0 {
		share := L.rate / float64(L.nLeaf)
		if L.group[0].rate < share {
			return false
		}
		n.setLevel(c, share)
	}
	for _, id := range n.pending {
		if f := &n.flows[id]; f.live && f.class < 0 {
			n.place(id) // a leaf of c (the only flow its worker link carries)
		}
	}
	n.pending = n.pending[:0]
	n.refreshTouched()
	return true
}

// star is settle for a component without shared flows: one shard link and
// its leaves (the common incast: each worker moves one block at a time).
// Progressive filling then caps the groups slower than the link's share,
// slowest first, and gives the rest the share. It reports false for any
// other component.
func (n *Net) star(comp []int32, num uint32) bool {
	var c int32 = -1
	for _, l := range comp {
		if L := &n.links[l]; L.shard && L.nLeaf > 0 {
			if c >= 0 {
				return false
			}
			c = l
		}
	}
	n.starAt(c, comp, num)
	return true
}

// starAt is star for shard link c (−1: none, every flow ended).
func (n *Net) starAt(c int32, comp []int32, num uint32) {
	if c < 0 {
		n.placeAll(comp, num) // every flow ended: nothing to share
		return
	}
	L := &n.links[c]
	left, cnt := L.rate, L.nLeaf
	for {
		if cnt == 0 {
			break
		}
		share := left / float64(cnt)
		// The slowest group not yet capped.
		g := -1
		for k := range L.group {
			G := &L.group[k]
			if len(G.flows) > 0 && G.capped != num && (g < 0 || G.rate < L.group[g].rate) {
				g = k
			}
		}
		if g < 0 || !(L.group[g].rate < share) {
			n.setLevel(c, share)
			break
		}
		G := &L.group[g]
		G.capped = num
		left = max(0, left-float64(len(G.flows))*G.rate)
		cnt -= int32(len(G.flows))
	}
	n.placeAll(comp, num)
}

// placeAll moves the leaves whose group changed between its link's class
// and their own, and places the flows started at t.
func (n *Net) placeAll(comp []int32, num uint32) {
	for _, l := range comp {
		L := &n.links[l]
		for g := range L.group {
			G := &L.group[g]
			private := G.capped == num
			if private == G.private {
				continue
			}
			G.private = private
			for _, id := range G.flows {
				if n.flows[id].class >= 0 {
					n.place(id)
				}
			}
		}
	}
	for _, id := range n.releaf {
		// A leaf again: whichever class held it as a shared flow, its
		// group's says now.
		if f := &n.flows[id]; f.live && f.leaf && f.class >= 0 {
			n.place(id)
		}
	}
	n.releaf = n.releaf[:0]
	for _, id := range n.pending {
		if f := &n.flows[id]; f.live && f.class < 0 {
			if f.leaf {
				n.place(id)
			} else {
				n.move(id, f.next)
			}
		}
	}
	n.pending = n.pending[:0]
	n.refreshTouched()
}

// refreshTouched queues the next end of every class touched.
func (n *Net) refreshTouched() {
	for _, c := range n.touched {
		n.links[c].touch = false
		n.refresh(c)
	}
	n.touched = n.touched[:0]
}

// place puts leaf id in the class its group says: its shard link's, or
// its own link's at its own rate.
func (n *Net) place(id int32) {
	f := &n.flows[id]
	if !n.links[f.s].group[f.g].private {
		n.move(id, f.s)
		return
	}
	n.setLevel(f.w, n.links[f.w].rate)
	n.move(id, f.w)
}

// refresh queues class c's next end.
func (n *Net) refresh(c int32) {
	at, ok := n.classNext(c)
	n.ends.set(c, at, ok)
}

// classNext is when the first flow of class c ends.
func (n *Net) classNext(c int32) (time.Duration, bool) {
	L := &n.links[c]
	for !L.fin.empty() {
		e := L.fin.top()
		if f := &n.flows[e.id]; f.live && f.class == c && f.gen == e.gen {
			return L.vat + drain(e.fin-L.v, L.level), true
		}
		L.fin.pop()
	}
	return 0, false
}

// drain is how long rem bytes take at rate, rounded up to the nanosecond;
// a thousandth of a nanosecond over a whole one is rounding error (flows
// that share a link equally end together).
func drain(rem, rate float64) time.Duration {
	d := math.Ceil(rem*1e9/rate - 1e-3)
	if !(d < 1<<62) {
		return 1 << 62 // starved to rounding error: it waits for the next change
	}
	return time.Duration(max(0, d))
}

// solver is settle's reusable scratch: the links and flows of the
// component being solved and a min-heap of shares.
type solver struct {
	num   uint32
	links []int32
	flows []int32
	heap  []share
}

// share is a link's equal share of what it has left (group −1), or a
// group of its leaves' own rate.
type share struct {
	share float64
	link  int32
	group int32
}

func (a share) less(b share) bool {
	if a.share != b.share {
		return a.share < b.share
	}
	if a.link != b.link {
		return a.link < b.link
	}
	return a.group < b.group // the link first: a lone leaf is its link's class, not its own
}

func (s *solver) heapify() {
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
}

func (s *solver) push(e share) {
	s.heap = append(s.heap, e)
	h := s.heap
	for i := len(h) - 1; i > 0; {
		j := (i - 1) / 2
		if !h[i].less(h[j]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (s *solver) pop() share {
	h := s.heap
	top := h[0]
	h[0] = h[len(h)-1]
	s.heap = h[:len(h)-1]
	s.down(0)
	return top
}

func (s *solver) down(i int) {
	h := s.heap
	for {
		l, m := 2*i+1, i
		if l < len(h) && h[l].less(h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].less(h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// endHeap orders the classes' next ends by time, then link: one entry a
// class, found by its link (pos, −1: none), so that its size is the
// classes with flows, not the changes since.
type endHeap struct {
	h   []end
	pos []int32
}

type end struct {
	at   time.Duration
	link int32
}

func (a end) less(b end) bool { return a.at < b.at || (a.at == b.at && a.link < b.link) }

// set puts class c's next end at at (ok false: it has none).
func (q *endHeap) set(c int32, at time.Duration, ok bool) {
	i := q.pos[c]
	switch {
	case !ok && i < 0:
		return
	case !ok:
		last := len(q.h) - 1
		q.swap(int(i), last)
		q.h = q.h[:last]
		q.pos[c] = -1
		if int(i) < last {
			q.fix(int(i))
		}
	case i < 0:
		q.h = append(q.h, end{at, c})
		q.pos[c] = int32(len(q.h) - 1)
		q.up(len(q.h) - 1)
	default:
		q.h[i].at = at
		q.fix(int(i))
	}
}

func (q *endHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.pos[q.h[i].link], q.pos[q.h[j].link] = int32(i), int32(j)
}

func (q *endHeap) fix(i int) {
	if !q.up(i) {
		q.down(i)
	}
}

func (q *endHeap) up(i int) bool {
	moved := false
	for i > 0 {
		j := (i - 1) / 2
		if !q.h[i].less(q.h[j]) {
			break
		}
		q.swap(i, j)
		i, moved = j, true
	}
	return moved
}

func (q *endHeap) down(i int) {
	n := len(q.h)
	for {
		l, m := 2*i+1, i
		if l < n && q.h[l].less(q.h[m]) {
			m = l
		}
		if r := l + 1; r < n && q.h[r].less(q.h[m]) {
			m = r
		}
		if m == i {
			return
		}
		q.swap(i, m)
		i = m
	}
}

// finHeap orders a class's flows by the v at which they end, then id. The
// flows of a class mostly end in the order they joined it (equal blocks
// at one level): those go to a queue in that order, in O(1), and only one
// that would end before the queue's last goes to the heap. Its first is
// the first of the two.
type finHeap struct {
	h  []fin
	q  []fin // ascending
	qh int   // q's first
}

type fin struct {
	fin float64
	id  int32
	gen uint32
}

func (a fin) less(b fin) bool { return a.fin < b.fin || (a.fin == b.fin && a.id < b.id) }

func (q *finHeap) empty() bool { return len(q.h) == 0 && q.qh == len(q.q) }

// top is the first (q not empty).
func (q *finHeap) top() fin {
	if q.qh == len(q.q) || len(q.h) > 0 && q.h[0].less(q.q[q.qh]) {
		return q.h[0]
	}
	return q.q[q.qh]
}

func (q *finHeap) push(e fin) {
	if q.qh == len(q.q) || q.q[len(q.q)-1].less(e) {
		if q.qh == len(q.q) {
			q.q, q.qh = q.q[:0], 0
		} else if q.qh >= 64 && 2*q.qh >= len(q.q) {
			q.q = q.q[:copy(q.q, q.q[q.qh:])]
			q.qh = 0
		}
		q.q = append(q.q, e)
		return
	}
	q.h = append(q.h, e)
	h := q.h
	for i := len(h) - 1; i > 0; {
		j := (i - 1) / 2
		if !h[i].less(h[j]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// pop removes the first (q not empty).
func (q *finHeap) pop() {
	if q.qh < len(q.q) && (len(q.h) == 0 || !q.h[0].less(q.q[q.qh])) {
		q.qh++
		return
	}
	h := q.h
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].less(h[m]) {
			m = l
		}
		if r := l + 1; r < n && h[r].less(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.h = h
}
