package paradigm

import (
	"math"
	"time"
)

// Puller is one worker's pull rule: which version of each shard it must see
// (a shard answers a pull only once its version reaches the minimum), how many
// fresh blocks it needs before computing, and PSP's τ2 grace for the rest.
// Drive it per iteration: Start, then Response for each answer and Tick at
// Deadline; Ready tells when the worker may compute.
type Puller struct {
	kind    Kind
	shards  int
	partial int           // fresh blocks required after the first pull (S, or ⌈b·S⌉ under PSP)
	need    int           // fresh blocks required by the pull in progress
	grace   time.Duration // PSP τ2

	// ElasticBSP local-only: the gate's barrier count, and its value at
	// this worker's last pull. Inside a superstep the worker does not pull.
	steps  *uint64
	pulled uint64

	minV     []uint64
	fresh    []bool
	nFresh   int
	answered int
	maxSeen  uint64
	deadline time.Duration
	armed    bool
	ready    bool
}

func newPuller(s Spec, shards int, steps *uint64) *Puller {
	p := &Puller{kind: s.Kind, shards: shards, partial: shards, need: shards,
		minV: make([]uint64, shards), fresh: make([]bool, shards)}
	if s.LocalSteps() {
		p.steps = steps
	}
	if s.Kind == PSP {
		// −1e-9 keeps b·S that is whole in decimal (0.9·10) from rounding up.
		p.partial = max(1, min(shards, int(math.Ceil(s.BFrac*float64(shards)-1e-9))))
		p.grace = s.T2
	}
	return p
}

// Need is the number of fresh blocks the worker needs before computing
// (after the first pull, which is full).
func (p *Puller) Need() int { return p.partial }

// Start begins a pull. clock is the worker's clock (its iteration tag: the
// number of pushes, or under PSP the version it jumped to), read[i] the version
// of shard i it holds. first marks the initial pull, which is always full.
// When Ready is true straight after Start, the worker computes without
// asking any shard (ElasticBSP local-only inside a superstep).
func (p *Puller) Start(now time.Duration, clock uint64, read []uint64, first bool) {
	local := p.steps != nil && !first && *p.steps == p.pulled
	if p.steps != nil {
		p.pulled = *p.steps
	}
	for i := range p.minV {
		var m uint64
		switch {
		case p.kind == BSP:
			// The round the worker has just pushed for must be applied.
			// A first pull too: a worker that returns under its old id
			// mid-job (clock > 0) must read the round its clock names; a
			// newer version holds its old process's gradient, and pushing
			// for that round again is dropped while its clock moves on:
			// the round after then waits for it forever.
			m = clock
		case first || local:
		case p.steps != nil:
			m = p.pulled // the shards must have applied the superstep just ended
		case p.kind == PSP:
			m = clock // the round the worker has just pushed for must be applied
		case p.kind == Backup:
			m = read[i] + 1 // "a version newer than the one they read"
		}
		p.minV[i] = m
		p.fresh[i] = false
	}
	p.nFresh, p.answered, p.maxSeen, p.armed, p.ready = 0, 0, 0, false, false
	p.need = p.partial
	if first {
		p.need = p.shards
	}
	if local {
		p.need, p.ready = 0, true
	}
}

// MinVersion is the version shard i must reach before it answers this pull.
func (p *Puller) MinVersion(shard int) uint64 { return p.minV[shard] }

// Response records shard's answer at version; it returns Ready().
func (p *Puller) Response(now time.Duration, shard int, version uint64) bool {
	if version > p.maxSeen {
		p.maxSeen = version
	}
	if !p.fresh[shard] {
		p.answered++
		if version >= p.minV[shard] {
			p.fresh[shard] = true
			p.nFresh++
		}
	}
	p.update(now)
	return p.ready
}

func (p *Puller) update(now time.Duration) {
	if p.ready || p.nFresh < p.need {
		return
	}
	if p.nFresh == p.shards || p.grace == 0 {
		p.ready = true
		return
	}
	if !p.armed {
		p.armed, p.deadline = true, now+p.grace
	}
	if now >= p.deadline {
		p.ready = true
	}
}

// Deadline is when Tick must be called (PSP's τ2), if any.
func (p *Puller) Deadline() (time.Duration, bool) { return p.deadline, p.armed && !p.ready }

// Tick ends the τ2 grace at its deadline; it returns Ready().
func (p *Puller) Tick(now time.Duration) bool {
	p.update(now)
	return p.ready
}

// Ready reports whether the worker may compute.
func (p *Puller) Ready() bool { return p.ready }

// Fresh reports whether shard's block is fresh for this iteration.
func (p *Puller) Fresh(shard int) bool { return p.fresh[shard] }

// NextClock is the worker's iteration tag after this pull: under PSP a worker
// that is behind jumps to the largest version it saw.
func (p *Puller) NextClock(clock uint64) uint64 {
	if p.kind == PSP && p.maxSeen > clock {
		return p.maxSeen
	}
	return clock
}
