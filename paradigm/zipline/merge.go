package zipline

import (
	"math"
	"math/bits"
)

// tournament merges n ascending rows in (value, worker) order with a loser
// tree, the priority queue of choice for k-way merging: replacing the winner
// by its successor replays a single leaf-to-root path with one comparison
// per level, where a binary heap's sift-down needs two (pick the smaller
// child, then compare). Both are O(log n) per element; the loser tree does
// half the unpredictable branches, which dominate this loop.
//
// Node 0 holds the current winner, nodes 1..n-1 the loser of the match
// played there; worker p's leaf is the virtual node n+p (its parent is
// (n+p)/2), which gives a valid tree for any n, not only powers of two.
type tournament struct {
	node []entry
	win  []entry // scratch for the bottom-up build
	next []int   // next[p]: index in times[p] of worker p's entry in the tree
}

// entry is one worker's smallest unmerged time as a 128-bit merge key:
// (k, p) with k the time's bits mapped so that unsigned order is numeric
// order. Comparing keys with a borrow chain and swapping with masks makes
// each tournament match branch-free: merge order of heterogeneous workers is
// close to random, so a branch per match would be mispredicted half the
// time, and that, not the arithmetic, was the cost of this loop.
type entry struct {
	k, p uint64
}

// orderKey maps a time to a uint64 with the same order: positive floats get
// the sign bit set, negative ones are inverted. Adding +0 first turns −0 into
// +0, so the two zeros tie (and break the tie by worker) as they compare
// equal as floats.
func orderKey(v float64) uint64 {
	b := math.Float64bits(v + 0)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

// lessMask is all ones when a precedes b in merge order (by time, ties by
// worker id), else zero. Within one worker the index order is the row order,
// so (time, worker) orders all elements as (time, worker, index) does.
func lessMask(a, b entry) uint64 {
	_, borrow := bits.Sub64(a.p, b.p, 0)
	_, borrow = bits.Sub64(a.k, b.k, borrow)
	return -borrow
}

// exhausted is the entry of a worker with no time left; it loses to every
// time (the largest key, above even NaN's), so once the winner is exhausted
// every worker is.
func exhausted(p int) entry { return entry{k: math.MaxUint64, p: uint64(p)} }

// reset sizes the scratch for n workers, growing only when needed.
func (t *tournament) reset(n int) {
	if cap(t.node) < n {
		t.node = make([]entry, n)
		t.win = make([]entry, n)
		t.next = make([]int, n)
	}
	t.node, t.win, t.next = t.node[:n], t.win[:n], t.next[:n]
}

// init plays the first round bottom-up with every worker's first time
// (rows must be non-empty).
func (t *tournament) init(times [][]float64) {
	n := len(times)
	t.reset(n)
	for p := range t.next {
		t.next[p] = 0
	}
	leaf := func(c int) entry {
		if c >= n {
			return entry{k: orderKey(times[c-n][0]), p: uint64(c - n)}
		}
		return t.win[c]
	}
	for i := n - 1; i >= 1; i-- {
		a, b := leaf(2*i), leaf(2*i+1)
		if lessMask(b, a) != 0 {
			a, b = b, a
		}
		t.win[i], t.node[i] = a, b
	}
	if n == 1 {
		t.node[0] = leaf(1)
	} else {
		t.node[0] = t.win[1]
	}
}

// pop removes the smallest element and returns its worker and its index in
// that worker's row; ok is false when no element is left (or, on invalid
// input such as NaN, when the order can no longer be trusted to reach one),
// which is the guard against running out of elements.
func (t *tournament) pop(times [][]float64) (p, i int, ok bool) {
	p = int(t.node[0].p)
	row := times[p]
	i = t.next[p]
	if i >= len(row) {
		return p, i, false
	}
	t.next[p] = i + 1
	cur := exhausted(p)
	if i+1 < len(row) {
		cur.k = orderKey(row[i+1])
	}
	node := t.node
	for k := (len(node) + p) >> 1; k > 0; k >>= 1 {
		// Branch-free match: the loser stays at k, the winner moves up.
		held := node[k]
		m := lessMask(held, cur)
		dk, dp := (held.k^cur.k)&m, (held.p^cur.p)&m
		node[k] = entry{k: held.k ^ dk, p: held.p ^ dp}
		cur = entry{k: cur.k ^ dk, p: cur.p ^ dp}
	}
	node[0] = cur
	return p, i, true
}
