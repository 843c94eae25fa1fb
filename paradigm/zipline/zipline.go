package zipline

import (
	"fmt"
	"math"
)

// ZipLine returns, for each worker p, the index into times[p] of its chosen
// push time, such that max − min of the chosen times (span) is the smallest
// possible; among equally small spans it keeps the first one met in the
// merged order (see the package documentation). It runs in O(nR log n) time
// and allocates the answer plus O(n) scratch; use a Solver to reuse scratch.
// It assumes Validate(times) == nil.
func ZipLine(times [][]float64) (idx []int, span float64) {
	var s Solver
	idx = make([]int, len(times))
	return idx, s.ZipLine(times, idx)
}

// Solver runs ZipLine with scratch space kept between calls, so repeated
// barriers with at most the largest n seen so far allocate nothing.
// The zero value is ready to use. A Solver is not safe for concurrent use.
type Solver struct {
	merge tournament

	// The window is a doubly linked list of workers in the order their
	// current element entered it; merged order is ascending, so the oldest
	// entry (head) holds the window's minimum and the newest (tail) its
	// maximum. Indexing links by worker makes eviction O(1).
	prev, succ []int32
	cur        []float64 // cur[p]: value of worker p's element in the window
	pos        []int     // pos[p]: its index in times[p]
	inWin      []bool
}

const nilWorker = -1

// ZipLine writes the chosen index of every worker into idx (which must have
// len(times) entries; a different length is a programming error and panics)
// and returns the span. Same answer as the package-level ZipLine.
func (s *Solver) ZipLine(times [][]float64, idx []int) float64 {
	n := len(times)
	if len(idx) != n {
		panic(fmt.Sprintf("zipline: Solver.ZipLine: len(idx) = %d, want len(times) = %d", len(idx), n))
	}
	if infeasible(times, idx) {
		return math.Inf(1)
	}
	s.reset(n)
	s.merge.init(times)

	head, tail := int32(nilWorker), int32(nilWorker)
	size := 0
	best := math.Inf(1)
	var bestV float64
	bestP, bestI := nilWorker, 0
	for {
		p, i, ok := s.merge.pop(times)
		if !ok {
			break
		}
		v := times[p][i]

		// Move p to the tail of the window, evicting its older element.
		q := int32(p)
		switch {
		case !s.inWin[p]:
			s.inWin[p] = true
			size++
			s.append(q, &head, &tail)
		case q != tail:
			pr, nx := s.prev[p], s.succ[p]
			if pr == nilWorker {
				head = nx
			} else {
				s.succ[pr] = nx
			}
			s.prev[nx] = pr // nx exists: p is not the tail
			s.append(q, &head, &tail)
		}
		// (p already the tail: only its value changes.)
		s.cur[p], s.pos[p] = v, i

		if size == n {
			if d := v - s.cur[head]; d < best {
				best, bestV, bestP, bestI = d, v, p, i
			}
			// Once the oldest element is its worker's last time, it can never
			// be evicted: the minimum is fixed and the maximum only grows, so
			// no later window is strictly better.
			if s.pos[head] == len(times[head])-1 {
				break
			}
		}
	}
	s.reconstruct(times, idx, bestV, bestP, bestI)
	return best
}

// append links worker q after the current tail.
func (s *Solver) append(q int32, head, tail *int32) {
	s.prev[q], s.succ[q] = *tail, nilWorker
	if *tail == nilWorker {
		*head = q
	} else {
		s.succ[*tail] = q
	}
	*tail = q
}

// reset sizes the window for n workers, growing only when needed.
func (s *Solver) reset(n int) {
	if cap(s.prev) < n {
		s.prev = make([]int32, n)
		s.succ = make([]int32, n)
		s.cur = make([]float64, n)
		s.pos = make([]int, n)
		s.inWin = make([]bool, n)
	}
	s.prev, s.succ = s.prev[:n], s.succ[:n]
	s.cur, s.pos = s.cur[:n], s.pos[:n]
	s.inWin = s.inWin[:n]
	clear(s.inWin)
}

// reconstruct recovers the best window from its newest element (index bestI
// of worker bestP, value bestV) instead of copying the window at every
// improvement, which would cost O(n) per improvement. The window at that
// moment holds, for every other worker, its last element that precedes
// (bestV, bestP) in merge order; a binary search per row finds it, O(n log R)
// once.
func (s *Solver) reconstruct(times [][]float64, idx []int, bestV float64, bestP, bestI int) {
	for p, row := range times {
		if p == bestP {
			idx[p] = bestI
			continue
		}
		// Count the elements of row merged before (bestV, bestP): values
		// below bestV, and values equal to it when p < bestP (ties by worker).
		lo, hi := 0, len(row)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if row[m] < bestV || (row[m] == bestV && p < bestP) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		idx[p] = lo - 1
	}
}
