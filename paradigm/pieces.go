package paradigm

import "fmt"

// This file builds one piece of a policy for a process that owns only that
// piece: the coordinator its gate, shard i its aggregator, a worker its
// puller. Each piece decides exactly as the same piece of New's Policy.
//
// Backup's set=shared (one set of N workers chosen across all shards) ties
// the aggregators together and so exists only in a whole Policy: its
// pieces are refused here rather than built to decide differently.
// ElasticBSP's apply=local (shards apply and workers pull at the gate's
// barriers) is built piecewise with the barrier count carried between the
// pieces by their driver: Barriers reads it off the gate, a shard's
// Superstep applies at each barrier it is told of, and a worker's
// Puller.SetBarriers learns it with its release.

// NewGate builds the job's gate (the coordinator's piece).
func NewGate(spec Spec, cfg Config) (Gate, error) {
	if err := spec.checkPiece(cfg); err != nil {
		return nil, err
	}
	var steps *uint64
	if spec.Kind == Elastic {
		steps = new(uint64) // barriers passed (Barriers)
	}
	return newGate(spec, cfg.Workers, steps), nil
}

// NewAggregator builds shard i's aggregator (shard i's piece).
func NewAggregator(spec Spec, cfg Config, shard int) (Aggregator, error) {
	if err := spec.checkPiece(cfg); err != nil {
		return nil, err
	}
	if shard < 0 || shard >= cfg.Shards {
		return nil, fmt.Errorf("%w: shard %d outside [0, %d)", ErrConfig, shard, cfg.Shards)
	}
	if err := onePiece(spec); err != nil {
		return nil, err
	}
	if spec.LocalSteps() {
		return newSuperstepAgg(cfg.Workers), nil
	}
	return newAggregator(spec, cfg.Workers, nil), nil
}

// Superstep is ElasticBSP apply=local's aggregator on one shard
// (NewAggregator's): Push only buffers the superstep's gradients, and
// Barrier applies them, each weighted by 1/(workers that contributed), when
// the shard's driver learns that the gate passed a barrier. Barrier must
// be called once per barrier, in order: the shard's version counts them.
type Superstep interface {
	Aggregator
	Barrier() Apply
}

// Barrier applies the superstep the gate's barrier ended.
func (a *superstepAgg) Barrier() Apply { return a.flush() }

// Barriers is the number of barriers gate has passed: ElasticBSP's
// supersteps ended, which apply=local's shards apply (their versions) and
// whose latest its workers pull. 0 for every other gate.
func Barriers(g Gate) uint64 {
	if e, ok := g.(*elasticGate); ok {
		return *e.steps
	}
	return 0
}

// NewPuller builds a worker's puller (a worker's piece). The pull rule is
// the same for every worker, so it needs no worker id.
func NewPuller(spec Spec, cfg Config) (*Puller, error) {
	if err := spec.checkPiece(cfg); err != nil {
		return nil, err
	}
	if err := onePiece(spec); err != nil {
		return nil, err
	}
	var steps *uint64
	if spec.LocalSteps() {
		steps = new(uint64) // the gate's count, as SetBarriers tells it
	}
	return newPuller(spec, cfg.Shards, steps), nil
}

// SetBarriers tells an ElasticBSP apply=local worker's puller how many
// barriers the gate has passed (a driver that hosts the gate elsewhere
// carries the count with the release): Start then pulls the superstep's
// average when the count moved since its last pull, and computes on its
// own copy otherwise. The count only grows; other pullers ignore it.
func (p *Puller) SetBarriers(n uint64) {
	if p.steps != nil && n > *p.steps {
		*p.steps = n
	}
}

// onePiece refuses the options whose pieces only work inside a whole Policy.
func onePiece(spec Spec) error {
	switch {
	case spec.Kind == Backup && spec.SharedSet:
		return fmt.Errorf("%w: backup set=shared chooses one set across every shard: build the whole policy with New", ErrConfig)
	}
	return nil
}

// newGate is spec's gate for k workers; steps counts ElasticBSP's barriers.
func newGate(spec Spec, k int, steps *uint64) Gate {
	switch spec.Kind {
	case BSP:
		return newSSPGate(k, 0)
	case SSP:
		return newSSPGate(k, int64(spec.S))
	case DSSP:
		return newDSSPGate(k, spec)
	case Elastic:
		return newElasticGate(k, spec, steps)
	default: // ASP, backup, PSP, softsync, delay: no clock gate; pulls do the waiting
		return newFreeGate(k)
	}
}

// newAggregator is spec's per-shard aggregator for k workers (set: backup's
// shared set, or nil). ElasticBSP's apply=local is built by New.
func newAggregator(spec Spec, k int, set *sharedSet) Aggregator {
	switch spec.Kind {
	case BSP:
		return newSyncAgg(k, spec.Sum)
	case Backup:
		return newBackupAgg(k, k-spec.B, set)
	case PSP:
		c := spec.C
		if c == 0 {
			c = k
		}
		return newPSPAgg(k, c, spec.T1)
	case Softsync:
		return newSoftsyncAgg(k, max(1, k/spec.N), spec.ConstLR)
	case Delay:
		return newDelayAgg(spec.D)
	default: // ASP, SSP, DSSP, ElasticBSP inside a superstep
		return newAsyncAgg()
	}
}

// checkPiece is Validate for one piece of a policy: auto has none of its
// own (its driver runs a candidate's).
func (s Spec) checkPiece(cfg Config) error {
	if err := s.Validate(cfg); err != nil {
		return err
	}
	if s.Kind == Auto {
		return fmt.Errorf("%w: auto has no policy of its own: its driver runs one of its candidates (Spec.Among)", ErrConfig)
	}
	return nil
}
