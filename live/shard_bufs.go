package live

import (
	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/paradigm"
)

// This file: the gradient buffers a shard keeps across rounds.
//
// A kept push hands its receive buffer to the aggregator and takes a
// spare one for the connection's next push; an apply gives the buffers
// back. Keeping one spare per worker means a round in steady state
// allocates nothing: with fewer (there used to be 4), every round of K > 4
// workers allocated and faulted in K-4 fresh blocks (160 MB and about
// 17,000 page faults a round at K = 8 and 10M floats).
//
// The memory bound, per shard of n floats (4n bytes a block): the weights
// and up to two spare snapshots (plus one per pull reply being written),
// the optimizer's velocity, one receive buffer per connected worker, the
// gradients the aggregator holds, and at most spareGrads(K, n) spare
// blocks, never more than spareGradBytes.

// spareGradBytes caps the spare gradient buffers of one shard: 512 MiB,
// one per worker up to K = 12 at 10M floats a shard.
const spareGradBytes = 512 << 20

// spareGrads is how many spare gradient buffers of n floats a shard of a
// job of k workers keeps: one per worker, within spareGradBytes, and at
// least one.
func spareGrads(k, n int) int {
	if n <= 0 {
		return 0
	}
	return max(1, min(k, spareGradBytes/(4*n)))
}

// initSpares sets the spare-buffer cap and, where the paradigm buffers
// gradients (not those applying each on arrival, which keep none), makes
// the spares now and touches every page, so the first rounds take no page
// faults on the push path.
func (s *Shard) initSpares(spec paradigm.Spec, k int) {
	n := s.hi - s.lo
	s.maxFree = spareGrads(k, n)
	if spec.AppliesOnArrival() {
		return
	}
	s.free = make([][]float32, 0, s.maxFree)
	for range s.maxFree {
		b := hugemem.Floats(n) // on 2 MB pages where it can be
		faultIn(b)
		s.free = append(s.free, b)
	}
}

// faultIn writes every page of b (a fresh block is mapped lazily, so its
// first write of each 4 KB page would otherwise fault on the push path).
func faultIn(b []float32) {
	for i := 0; i < len(b); i += 1024 {
		b[i] = 0
	}
}
