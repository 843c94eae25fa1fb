package network

import (
	"math"
	"time"
)

// This file: the heaps the flows use: the solver's shares by level, each
// class's next end, and the finishing flows.

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
