package paradigm

import "time"

// backupAgg is sync SGD with backup workers (PARADIGMS.md §6): at version v
// a shard takes the first N gradients read at v, applies their mean and drops
// every later one read before v+1.
type backupAgg struct {
	round
	n   int
	set *sharedSet // nil: each shard picks its own first N
}

func newBackupAgg(k, n int, set *sharedSet) *backupAgg {
	return &backupAgg{round: newRound(k), n: n, set: set}
}

// need is N, or every live worker when fewer than N are alive, so a death
// never makes a shard wait forever.
func (a *backupAgg) need() int { return max(1, min(a.n, a.nLive)) }

func (a *backupAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	if !a.known(g.Worker) || a.have[g.Worker] || g.Read != a.v || len(a.buf) >= a.need() ||
		(a.set != nil && !a.set.choose(a.v, g.Worker, a.need())) {
		a.dropped++
		return false, false, Apply{}
	}
	a.add(g)
	ok, ap := a.due()
	return true, ok, ap
}

func (a *backupAgg) due() (bool, Apply) {
	if len(a.buf) == 0 || len(a.buf) < a.need() {
		return false, Apply{}
	}
	return true, a.close(1/float64(len(a.buf)), 1)
}

func (a *backupAgg) Leave(now time.Duration, p int) (bool, Apply) {
	a.leave(p)
	if a.set != nil {
		a.set.forget(a.v, p)
	}
	return a.due()
}

func (a *backupAgg) Join(now time.Duration, p int) { a.join(p) }

// sharedSet is the coordinator-chosen option: the first N workers heard from
// at version v, by any shard, form the one set every shard applies. It lives
// in the process that hosts all aggregators (sim, virtual, inproc).
type sharedSet struct {
	n      int
	v      uint64
	chosen []int
}

func (s *sharedSet) choose(v uint64, p, need int) bool {
	if v != s.v {
		s.v, s.chosen = v, s.chosen[:0]
	}
	for _, q := range s.chosen {
		if q == p {
			return true
		}
	}
	if len(s.chosen) >= need {
		return false
	}
	s.chosen = append(s.chosen, p)
	return true
}

// forget reopens a dead worker's place so shards that have not yet heard from
// it take someone else rather than wait.
func (s *sharedSet) forget(v uint64, p int) {
	if v != s.v {
		return
	}
	for i, q := range s.chosen {
		if q == p {
			s.chosen = append(s.chosen[:i], s.chosen[i+1:]...)
			return
		}
	}
}
