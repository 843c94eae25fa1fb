package sim

import "time"

type evKind uint8

const (
	evComputeDone evKind = iota // a worker finished computing: it pushes
	evPullArrive                // a pull response reaches its worker
	evAggTick                   // an aggregator's deadline (PSP τ1)
	evPullTick                  // a puller's deadline (PSP τ2)
	evFail                      // a worker dies silently
	evRemove                    // the heartbeat timeout removes a dead worker
)

type event struct {
	at   time.Duration
	seq  uint64 // the last tie-break; see before
	kind evKind
	p    int32
	i    int32
	v    uint64
}

// before orders events by time, then by kind, worker and shard, and only
// then by insertion: simultaneous events run in a canonical order, so two
// paradigms that schedule the same events in different orders (BSP's barrier
// and backup workers with b = 0) still produce the same run.
func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	if e.kind != o.kind {
		return e.kind < o.kind
	}
	if e.p != o.p {
		return e.p < o.p
	}
	if e.i != o.i {
		return e.i < o.i
	}
	return e.seq < o.seq
}

// queue is a binary min-heap of events by value: container/heap would box
// every event in an interface, an allocation per push on the hot path.
type queue struct {
	h   []event
	seq uint64
}

func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	h := q.h
	for i := len(h) - 1; i > 0; {
		j := (i - 1) / 2
		if !h[i].before(&h[j]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (q *queue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].before(&h[m]) {
			m = l
		}
		if r := l + 1; r < n && h[r].before(&h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.h = h
	return top
}

func (q *queue) len() int { return len(q.h) }
