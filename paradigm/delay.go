package paradigm

import "time"

// delayAgg is the fixed-staleness rule delay:d=N, the backup-workers
// paper's §2.1 experiment ("simulated staleness by using old gradients for
// the parameter updates", its Figure 2): each shard holds the gradients it
// is offered in a line N long and, once the line is full, applies the
// oldest as each new one arrives. The line is what fixes the staleness:
// with one worker every gradient computed on version v is applied as the
// update of version v+N (θ ← θ − α·∇F(θ at v−N)); during the first N
// updates it is computed on w⁰, so the staleness ramps 0, 1, …, N as the
// paper's warm-up did. With K workers the line adds N to the staleness
// asynchrony already gives (about K−1 on equal workers); a run's
// staleness histogram reports the sum. No worker ever waits: the gate
// releases on every push and pulls take the current version.
//
// d=0 applies on arrival and is ASP.
type delayAgg struct {
	d       int
	v       uint64
	ring    []Grad // the line: n gradients from head on, oldest first
	head, n int
	out     [1]Contribution
	dropped int64
}

func newDelayAgg(d int) *delayAgg { return &delayAgg{d: d} }

func (a *delayAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	if a.n < a.d {
		// The ring grows to d as it fills, so a large d costs memory
		// only when the run gets that far.
		if i := (a.head + a.n) % a.d; i == len(a.ring) {
			a.ring = append(a.ring, g)
		} else {
			a.ring[i] = g
		}
		a.n++
		return true, false, Apply{}
	}
	if a.d > 0 { // the line is full: g takes the oldest one's place
		a.ring[a.head], g = g, a.ring[a.head]
		a.head = (a.head + 1) % a.d
	}
	a.out[0] = Contribution{ID: g.ID, Worker: g.Worker, Staleness: int64(a.v) - int64(g.Read), Weight: 1}
	a.v++
	return true, true, Apply{Version: a.v, LRScale: 1, Grads: a.out[:]}
}

func (a *delayAgg) Deadline() (time.Duration, bool)              { return 0, false }
func (a *delayAgg) Tick(now time.Duration) (bool, Apply)         { return false, Apply{} }
func (a *delayAgg) Leave(now time.Duration, p int) (bool, Apply) { return false, Apply{} }
func (a *delayAgg) Join(now time.Duration, p int)                {}
func (a *delayAgg) Version() uint64                              { return a.v }
func (a *delayAgg) Dropped() int64                               { return a.dropped }

// Reset discards the line: its gradients were computed on versions the
// restored shard may never have published.
func (a *delayAgg) Reset(v uint64, dropped []uint64) []uint64 {
	for i := range a.n {
		dropped = append(dropped, a.ring[(a.head+i)%a.d].ID)
	}
	a.dropped += int64(a.n)
	a.head, a.n = 0, 0
	a.v = v
	return dropped
}
