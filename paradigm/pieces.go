package paradigm

import "fmt"

// This file builds one piece of a policy for a process that owns only that
// piece: the coordinator its gate, shard i its aggregator, a worker its
// puller. Each piece decides exactly as the same piece of New's Policy.
//
// Two options tie pieces together and so exist only in a whole Policy:
// backup's set=shared (one set of N workers chosen across all shards) and
// ElasticBSP's apply=local (shards apply and workers pull at the gate's
// barriers). Their pieces are refused here rather than built to decide
// differently.

// NewGate builds the job's gate (the coordinator's piece).
func NewGate(spec Spec, cfg Config) (Gate, error) {
	if err := spec.Validate(cfg); err != nil {
		return nil, err
	}
	var steps *uint64
	if spec.Kind == Elastic {
		steps = new(uint64) // barriers passed; only a whole Policy's pieces read it
	}
	return newGate(spec, cfg.Workers, steps), nil
}

// NewAggregator builds shard i's aggregator (shard i's piece).
func NewAggregator(spec Spec, cfg Config, shard int) (Aggregator, error) {
	if err := spec.Validate(cfg); err != nil {
		return nil, err
	}
	if shard < 0 || shard >= cfg.Shards {
		return nil, fmt.Errorf("%w: shard %d outside [0, %d)", ErrConfig, shard, cfg.Shards)
	}
	if err := onePiece(spec); err != nil {
		return nil, err
	}
	return newAggregator(spec, cfg.Workers, nil), nil
}

// NewPuller builds a worker's puller (a worker's piece). The pull rule is
// the same for every worker, so it needs no worker id.
func NewPuller(spec Spec, cfg Config) (*Puller, error) {
	if err := spec.Validate(cfg); err != nil {
		return nil, err
	}
	if err := onePiece(spec); err != nil {
		return nil, err
	}
	return newPuller(spec, cfg.Shards, nil), nil
}

// onePiece refuses the options whose pieces only work inside a whole Policy.
func onePiece(spec Spec) error {
	switch {
	case spec.Kind == Backup && spec.SharedSet:
		return fmt.Errorf("%w: backup set=shared chooses one set across every shard: build the whole policy with New", ErrConfig)
	case spec.Kind == Elastic && spec.LocalOnly:
		return fmt.Errorf("%w: elastic apply=local applies at the gate's barriers: build the whole policy with New", ErrConfig)
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
	default: // ASP, backup, PSP, softsync: no clock gate; pulls do the waiting
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
	default: // ASP, SSP, DSSP, ElasticBSP inside a superstep
		return newAsyncAgg()
	}
}
