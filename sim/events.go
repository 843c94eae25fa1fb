package sim

import "time"

type evKind uint8

const (
	evComputeDone evKind = iota // a worker finished computing: it pushes
	evPullArrive                // a pull response reaches its worker
	evAggTick                   // an aggregator's deadline (PSP τ1)
	evPullTick                  // a puller's deadline (PSP τ2)
	evReady                     // a partially pulled worker starts computing, after everything else at this instant
	evFail                      // a worker dies silently
	evRemove                    // the heartbeat timeout removes a dead worker
	// With a network only:
	evPushArrive  // a worker's push has reached a shard
	evPushed      // a worker's clock report reaches the coordinator (its pushes acknowledged)
	evRelease     // a release reaches its worker
	evPullRequest // a pull request reaches a shard
	evReply       // a pull's answer leaves its shard after the apply in progress and its server delay
)

type event struct {
	at  time.Duration
	key uint64 // kind, worker, shard packed: the tie-break order, see mkKey
	v   uint64
}

// mkKey packs the tie-break of simultaneous events: they run by kind, then
// worker, then shard — a canonical order, so two paradigms that schedule the
// same events in different orders (BSP's barrier and backup workers with
// b = 0) still produce the same run. Two events with equal time and key are
// identical, so no insertion counter is needed. One compare of a packed key
// keeps the heap, the simulator's hottest code, fast.
func mkKey(kind evKind, p, i int) uint64 { return rotKey(kind, 0, p, i) }

// rotKey is mkKey with the workers' order rotated (rot, before the worker):
// see engine.pushKey.
func rotKey(kind evKind, rot uint64, p, i int) uint64 {
	return uint64(kind)<<56 | rot<<(keyWorker+maxWorkerBits) | uint64(uint32(p))<<keyWorker | uint64(uint32(i))&(1<<keyWorker-1)
}

// The key's fields: 8 bits of kind, then 17 of rotated worker, 17 of
// worker and 22 of shard.
const (
	maxWorkerBits = 17
	keyWorker     = 22
	maxKeyWorkers = 1<<maxWorkerBits - 1
	maxKeyShards  = 1<<keyWorker - 1
)

func (e *event) kind() evKind { return evKind(e.key >> 56) }
func (e *event) worker() int  { return int(e.key >> keyWorker & maxKeyWorkers) }
func (e *event) shard() int   { return int(e.key & maxKeyShards) }

func (e *event) before(o *event) bool {
	return e.at < o.at || (e.at == o.at && e.key < o.key)
}

// queue is a 4-ary min-heap of events by value: container/heap would box
// every event in an interface, an allocation per push on the hot path; four
// children a node halve the levels a pop sifts through, and they sit in one
// or two cache lines. Events are totally ordered (before), so any heap pops
// them in the same order.
type queue struct {
	h []event
}

func (q *queue) push(e event) {
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		j := (i - 1) / 4
		if !e.before(&h[j]) {
			break
		}
		h[i] = h[j]
		i = j
	}
	h[i] = e
}

func (q *queue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].before(&h[m]) {
				m = k
			}
		}
		if !h[m].before(&last) {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = last
	}
	q.h = h
	return top
}

func (q *queue) len() int { return len(q.h) }
