package paradigm

import (
	"errors"
	"fmt"
	"time"
)

// Gate decides when a worker may start its next iteration (PARADIGMS.md's
// release). One per job. Every method takes the time since the job's start and
// appends the workers it releases to out, in a deterministic order.
type Gate interface {
	// Pushed records that worker p completed a push (t_p++).
	Pushed(now time.Duration, p int, out []int) []int
	// Leave removes p from every set; workers waiting on it may be released.
	Leave(now time.Duration, p int, out []int) []int
	// Join adds p at the current minimum clock; p is released at once.
	Join(now time.Duration, p int, out []int) []int
	// SetClock sets live worker p's clock to t, as a driver that has
	// lost its gate learns it again (a restarted live coordinator, from
	// each worker as it reconnects): nothing is counted, and workers the
	// new minimum frees are released. A gate rebuilt this way keeps its
	// paradigm's rule but starts its adaptive state afresh (DSSP's
	// intervals, ElasticBSP's barriers: one BSP step first).
	SetClock(now time.Duration, p int, t int64, out []int) []int
	// Clock is p's clock; Min is the smallest clock of a live worker.
	Clock(p int) int64
	Min() int64
	// Held reports whether p is waiting for a release.
	Held(p int) bool
	Stats() GateStats
}

// GateStats are the gate's counters for the run summary.
type GateStats struct {
	Releases        int64
	MaxGap          int64 // largest t_p − min t at any release
	ControllerCalls int64 // DSSP controller or ElasticBSP barrier searches
}

// Grad is a gradient offered to a shard's aggregator. The aggregator never sees
// the numbers: it returns decisions naming gradients by ID, and the driver
// carries them out.
type Grad struct {
	ID     uint64 // the driver's handle for the gradient's data
	Worker int
	Read   uint64 // this shard's version the gradient was computed from
	Clock  uint64 // the worker's iteration tag (PSP accepts by it)
}

// Contribution is one gradient in an apply: w ← w − lr·LRScale·Σ Weight·g.
type Contribution struct {
	ID        uint64
	Worker    int
	Staleness int64 // shard version at apply − Read
	Weight    float64
}

// Apply tells the driver to update the shard's block. Grads is only valid
// until the next call on the aggregator that returned it.
type Apply struct {
	Version uint64 // the shard's version after this apply
	LRScale float64
	Grads   []Contribution
}

// Aggregator decides per shard whether a gradient is accepted, buffered or
// dropped, and when the buffer is applied. One per shard.
type Aggregator interface {
	// Push offers g. ok reports acceptance (false: the driver drops it);
	// applied reports that a is due now.
	Push(now time.Duration, g Grad) (ok, applied bool, a Apply)
	// Deadline is the time at which Tick must be called, if any (PSP's τ1).
	Deadline() (time.Duration, bool)
	Tick(now time.Duration) (applied bool, a Apply)
	Leave(now time.Duration, p int) (applied bool, a Apply)
	Join(now time.Duration, p int)
	Version() uint64
	Dropped() int64
	// Reset makes the aggregator continue at version v with an empty
	// buffer, keeping its membership. The IDs of buffered gradients it
	// discards are appended to dropped and returned (the driver frees their
	// data; they count as dropped). It is not an apply: no weights change.
	Reset(v uint64, dropped []uint64) []uint64
}

// Config sizes a job.
type Config struct {
	Workers int // K (λ in the softsync paper, N+b for backup workers)
	Shards  int // S
}

// Policy is one job's decisions: the gate, one aggregator per shard and one
// puller per worker.
type Policy struct {
	Spec    Spec
	Config  Config
	Gate    Gate
	Aggs    []Aggregator
	Pullers []*Puller

	// ElasticBSP: barriers the gate passed. Under local-only, supersteps
	// holds every shard's aggregator and flushed counts the barriers they
	// have applied.
	steps      *uint64
	supersteps []*superstepAgg
	flushed    uint64

	rd Ready // the decisions of the latest call, reused
}

// ErrConfig is wrapped by errors about a spec that does not fit the job.
var ErrConfig = errors.New("paradigm does not fit the job")

// Validate checks spec against the job size, naming the bad value.
func (s Spec) Validate(cfg Config) error {
	if cfg.Workers < 1 || cfg.Shards < 1 {
		return fmt.Errorf("%w: need at least one worker and one shard, got workers=%d shards=%d",
			ErrConfig, cfg.Workers, cfg.Shards)
	}
	switch s.Kind {
	case Backup:
		if s.B >= cfg.Workers {
			return fmt.Errorf("%w: backup b=%d must be below workers=%d (N = workers − b ≥ 1)", ErrConfig, s.B, cfg.Workers)
		}
	case PSP:
		if s.C > cfg.Workers {
			return fmt.Errorf("%w: psp c=%d exceeds workers=%d", ErrConfig, s.C, cfg.Workers)
		}
	case Softsync:
		if s.N > cfg.Workers {
			return fmt.Errorf("%w: softsync n=%d exceeds workers=%d (1 ≤ n ≤ λ)", ErrConfig, s.N, cfg.Workers)
		}
	case Auto:
		for _, c := range s.Among() {
			if err := c.Validate(cfg); err != nil {
				return fmt.Errorf("auto's candidate %s: %w", c, err)
			}
		}
	case 0:
		return fmt.Errorf("%w: empty spec", ErrConfig)
	}
	return nil
}

// New builds the whole policy for spec on a job of cfg's size: the gate,
// every shard's aggregator and every worker's puller in one value, for a
// driver that hosts them all (the simulator, virtual-time training). A
// process that owns one piece builds it with NewGate, NewAggregator or
// NewPuller instead.
func New(spec Spec, cfg Config) (*Policy, error) {
	if err := spec.checkPiece(cfg); err != nil {
		return nil, err
	}
	k := cfg.Workers
	pol := &Policy{Spec: spec, Config: cfg}
	if spec.Kind == Elastic {
		pol.steps = new(uint64)
	}
	pol.Gate = newGate(spec, k, pol.steps)
	var set *sharedSet
	if spec.Kind == Backup && spec.SharedSet {
		set = &sharedSet{n: k - spec.B}
	}
	for i := 0; i < cfg.Shards; i++ {
		var a Aggregator
		if spec.Kind == Elastic && spec.LocalOnly {
			sa := newSuperstepAgg(k)
			pol.supersteps = append(pol.supersteps, sa)
			a = sa
		} else {
			a = newAggregator(spec, k, set)
		}
		pol.Aggs = append(pol.Aggs, a)
	}
	for p := 0; p < k; p++ {
		pol.Pullers = append(pol.Pullers, newPuller(spec, cfg.Shards, pol.steps))
	}
	return pol, nil
}

// Ready is what one Policy call decided, as values for the driver to carry
// out in order (as etcd raft's Ready): first the applies, so that the workers
// released next pull the new weights, then the releases. Its slices are the
// Policy's own and are reused: they are valid until the next call on it.
type Ready struct {
	Applies  []ShardApply
	Released []int
}

// ShardApply is an Apply due on one shard.
type ShardApply struct {
	Shard int
	Apply
}

// Pushed records worker p's completed push (every shard has been offered
// its gradient) with the gate. Under ElasticBSP local-only a barrier has
// every shard apply its superstep (Ready.Applies), so the released workers
// pull the averaged model. Drivers that hold every aggregator (sim,
// virtual mode) call this rather than Gate.Pushed.
func (pol *Policy) Pushed(now time.Duration, p int) Ready {
	pol.rd.Applies = pol.rd.Applies[:0]
	pol.rd.Released = pol.Gate.Pushed(now, p, pol.rd.Released[:0])
	pol.flush()
	return pol.rd
}

// Finish ends the job: under ElasticBSP local-only the superstep still
// open holds gradients the workers have already stepped their copies with;
// they are returned as applies (weighted over the workers that contributed)
// rather than lost. Elsewhere there are none. Drivers call it once, when
// they stop.
func (pol *Policy) Finish(now time.Duration) []ShardApply {
	pol.rd.Applies = pol.rd.Applies[:0]
	for i, sa := range pol.supersteps {
		if len(sa.buf) > 0 {
			pol.rd.Applies = append(pol.rd.Applies, ShardApply{i, sa.flush()})
		}
	}
	return pol.rd.Applies
}

func (pol *Policy) flush() {
	for len(pol.supersteps) > 0 && pol.flushed < *pol.steps {
		pol.flushed++
		for i, sa := range pol.supersteps {
			pol.rd.Applies = append(pol.rd.Applies, ShardApply{i, sa.flush()})
		}
	}
}

// Leave removes worker p from the gate and every aggregator: the applies
// that become due (in shard order), then the workers the gate releases.
func (pol *Policy) Leave(now time.Duration, p int) Ready {
	pol.rd.Applies = pol.rd.Applies[:0]
	for i, a := range pol.Aggs {
		if ok, ap := a.Leave(now, p); ok {
			pol.rd.Applies = append(pol.rd.Applies, ShardApply{i, ap})
		}
	}
	pol.rd.Released = pol.Gate.Leave(now, p, pol.rd.Released[:0])
	pol.flush()
	return pol.rd
}

// Join adds worker p (a new id, or one that left) to the job; it is released
// at once. The caller gives it a fresh full pull.
func (pol *Policy) Join(now time.Duration, p int, out []int) []int {
	for _, a := range pol.Aggs {
		a.Join(now, p)
	}
	for len(pol.Pullers) <= p {
		pol.Pullers = append(pol.Pullers, newPuller(pol.Spec, pol.Config.Shards, pol.steps))
	}
	// A returning worker's copy is stale whatever superstep it left in:
	// its next pull is full even when the caller does not mark it first.
	pol.Pullers[p].pulled = ^uint64(0)
	return pol.Gate.Join(now, p, out)
}
