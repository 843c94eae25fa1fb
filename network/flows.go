package network

import (
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
// are solved first, so that the flows ran at their rates until now, and
// the links that change by now change, each at its own time.
func (n *Net) advance(now time.Duration) {
	if now < n.t {
		panic("network: time went backwards")
	}
	for n.nextChange <= now {
		n.applyChange()
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
