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

// queue is the events to come: a 4-ary min-heap of events by value, and
// beside it a few lanes, each a FIFO of events in order. container/heap
// would box every event in an interface, an allocation per push on the
// hot path; four children a node halve the levels a pop sifts through,
// and they sit in one or two cache lines. With a network most events of a
// push are scheduled a fixed delay after now (an arrival, a request, a
// release one latency; a report after the acknowledgements): with one
// latency everywhere each lane's events come in time order, so it takes
// them in O(1) where the heap would sift each through all its levels
// twice. An event that would come before its
// lane's last goes to the heap instead. Events are totally ordered
// (before), and pop takes the first of the heap's and the lanes' firsts,
// so the queue pops them in the same order wherever they wait.
type queue struct {
	h      []event
	lanes  [nLanes]lane
	inLane int // events in the lanes: none without a network, where pop is the heap's
}

// The lanes, by what schedules into them: one latency after now (a
// transfer's arrival after it ends, a pull request, a release); a clock
// report (after the acknowledgements); a pull's answer leaving its shard
// (after the apply in progress and its server delay).
const (
	laneLatency = iota
	lanePushed
	laneReply
	nLanes
)

// lane is a FIFO of events in order: ev[head:].
type lane struct {
	ev   []event
	head int
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

// pushLane queues e in lane l, or in the heap if it comes before the
// lane's last.
func (q *queue) pushLane(l int, e event) {
	L := &q.lanes[l]
	switch n := len(L.ev); {
	case L.head == n:
		L.ev, L.head = L.ev[:0], 0
	case e.before(&L.ev[n-1]):
		q.push(e)
		return
	case L.head >= 64 && 2*L.head >= n:
		L.ev = L.ev[:copy(L.ev, L.ev[L.head:])]
		L.head = 0
	}
	L.ev = append(L.ev, e)
	q.inLane++
}

// first is where the first event waits: −1 the heap, else its lane
// (−2: the queue is empty).
func (q *queue) first() int {
	if q.inLane == 0 {
		if len(q.h) > 0 {
			return -1
		}
		return -2
	}
	b := -2
	var be *event
	if len(q.h) > 0 {
		b, be = -1, &q.h[0]
	}
	for l := range q.lanes {
		L := &q.lanes[l]
		if L.head < len(L.ev) && (be == nil || L.ev[L.head].before(be)) {
			b, be = l, &L.ev[L.head]
		}
	}
	return b
}

// at is the time of the first event of b (first's answer, not −2).
func (q *queue) at(b int) time.Duration {
	if b < 0 {
		return q.h[0].at
	}
	L := &q.lanes[b]
	return L.ev[L.head].at
}

// take removes and returns the first event of b (first's answer, not −2).
func (q *queue) take(b int) event {
	if b < 0 {
		return q.popHeap()
	}
	L := &q.lanes[b]
	L.head++
	q.inLane--
	return L.ev[L.head-1]
}

func (q *queue) pop() event { return q.take(q.first()) }

func (q *queue) popHeap() event {
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

func (q *queue) len() int { return len(q.h) + q.inLane }
