package network

// This file: the settle's fast paths for a component that is one shard
// link and its workers' leaves (a star), solved without the general
// search.

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
