package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// Config is one simulated scenario. Zero fields take the documented default.
type Config struct {
	Spec        paradigm.Spec
	Workers     int // K
	Shards      int // S; zero means 1
	Timing      timing.WorkerSpec
	ServerDelay timing.ServerDelay // the zero value is none

	// The run ends after Iterations × Workers pushes in total, or at virtual
	// time Duration, whichever comes first; both zero means 100 iterations.
	Iterations int
	Duration   time.Duration
	Seed       uint64

	// Failures lists workers that die; each is removed from every paradigm's
	// sets HeartbeatTimeout later (zero means 10 s), as a live coordinator
	// would after missed heartbeats.
	Failures         []Failure
	HeartbeatTimeout time.Duration

	// Network, when set, charges every push and pull for moving its bytes
	// through the worker's and the shard's links, every clock report,
	// release and pull request one latency, and every apply its time
	// (package network); nil: transfers are instant (--network none).
	Network *network.Spec
	// Params is the model's size in values: shard i's push and pull move
	// its share (network.BlockFloats). Needed with Network.
	Params int

	// SearchCost is the simulated server's time per unit of ElasticBSP
	// barrier-search work (SearchWork): the workers a barrier releases
	// wait for it. 0: the search is free.
	SearchCost time.Duration

	// Replan decides, for --paradigm auto (Spec.Kind paradigm.Auto),
	// whether to switch: the simulator calls it every Spec.Every rounds
	// with what it measured since the last call. Package auto provides
	// it (auto.Replanner); required with auto, ignored otherwise.
	Replan func(now time.Duration, w Window, current paradigm.Spec) (Plan, error)

	Learner Learner // nil: timing only, no gradient math
	// Clock, when set, measures the wall time the DSSP controller and
	// ElasticBSP's barrier search take (Run.ControllerSeconds). It never
	// changes what the run does; nil: not measured.
	Clock    func() time.Time
	Trace    func(Event)                                   // nil: no trace (tests check invariants with it)
	Progress func(pushes, target int64, now time.Duration) // called about every 65,536 pushes
}

// Window is what the simulator measured since auto's last decision, as a
// coordinator would: each live worker's mean compute time (a worker that
// finished none in the window: at least the window's length) and the
// computes' pooled coefficient of variation.
type Window struct {
	Iter []time.Duration
	CV   float64
	// Draws are the window's iterations as multipliers of their worker's
	// mean (timing.Window.Read): the spread's shape.
	Draws []float64
	// Noise is the gradient noise scale B_noise a learner measured
	// (NoiseMeter), in gradients (B_noise over the samples a gradient
	// averages); 0 where none is measured: the simulator alone has no
	// gradients.
	Noise float64
}

// Switcher is a Learner told of --paradigm auto's switches: from now the
// applies are rule's (its step size, its local steps).
type Switcher interface {
	Switched(now time.Duration, rule paradigm.Spec)
}

// NoiseMeter is a Learner that measures the gradient noise scale
// (virtual-time training): Noise returns its latest estimate in
// gradients, 0 before it has one.
type NoiseMeter interface {
	Noise() float64
}

// Plan is auto's answer: switch to Next or not, with the predicted gain
// and the candidate predicted best (recorded in the run's decisions).
type Plan struct {
	Switch bool
	Next   paradigm.Spec
	Best   string
	Gain   float64
}

// Failure kills worker Worker at virtual time At.
type Failure struct {
	Worker int
	At     time.Duration
}

// Learner puts real numbers behind the simulator's decisions (virtual-time
// training). Every call carries the virtual time.
type Learner interface {
	// Serve snapshots shard's current block for worker's pull response.
	Serve(now time.Duration, worker, shard int)
	// Deliver makes the snapshot the worker's copy of the block.
	Deliver(now time.Duration, worker, shard int)
	// Compute computes worker's gradient from its copies and returns its handle.
	Compute(now time.Duration, worker int) uint64
	// Apply carries out an aggregator's apply on shard.
	Apply(now time.Duration, shard int, a paradigm.Apply)
	// Drop releases shard's part of a refused gradient.
	Drop(now time.Duration, shard int, id uint64)
}

// EventKind names what a trace event records.
type EventKind uint8

const (
	Push    EventKind = iota // Worker pushed; Clock is its clock after the push
	Release                  // the gate released Worker; Clock, Min are clocks then
	Update                   // Shard applied; N contributions, Version after
	Drop                     // Shard refused Worker's gradient
	Compute                  // Worker started computing with Fresh fresh blocks
	Remove                   // Worker was removed after failing
	Arrive                   // Worker's gradient block reached Shard (with a network, before its Push)
)

// Withhold is Worker not sending its block to Shard, which would drop it
// (PSP; paradigm.Spec.KnownDropped): Clock is the block's tag, Version the
// shard's version the worker knew. It follows the kinds above.
const Withhold = Arrive + 1

// Event is one trace record.
type Event struct {
	Kind          EventKind
	At            time.Duration
	Worker, Shard int
	Clock, Min    int64
	Version       uint64
	N, Fresh      int
	Live          int // live workers at the time
}

var errConfig = errors.New("bad simulation config")

func (c *Config) fill() error {
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Iterations == 0 && c.Duration == 0 {
		c.Iterations = 100
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = 10 * time.Second
	}
	switch {
	case c.Workers < 1:
		return fmt.Errorf("%w: workers=%d, need at least 1", errConfig, c.Workers)
	case c.Shards < 1:
		return fmt.Errorf("%w: shards=%d, need at least 1", errConfig, c.Shards)
	case c.Workers > maxKeyWorkers || c.Shards > maxKeyShards:
		return fmt.Errorf("%w: %d workers and %d shards: at most %d and %d", errConfig, c.Workers, c.Shards, maxKeyWorkers, maxKeyShards)
	case c.Iterations < 0:
		return fmt.Errorf("%w: iterations=%d must not be negative", errConfig, c.Iterations)
	case c.Duration < 0:
		return fmt.Errorf("%w: duration=%s must not be negative", errConfig, c.Duration)
	case c.Network != nil && c.Params < 1:
		return fmt.Errorf("%w: a network needs the model's size (params=%d)", errConfig, c.Params)
	case c.Params < 0:
		return fmt.Errorf("%w: params=%d must not be negative", errConfig, c.Params)
	}
	for _, f := range c.Failures {
		if f.Worker < 0 || f.Worker >= c.Workers || f.At < 0 {
			return fmt.Errorf("%w: failure of worker %d at %s is outside the job", errConfig, f.Worker, f.At)
		}
	}
	return nil
}

// SearchWork is the work of one ElasticBSP barrier search over n workers'
// R predictions each, in the units SearchCost prices, as the ElasticBSP
// paper counts its algorithms: ZipLine scans the n·R predictions once and
// at each one walks the window of n to evict the worker's older element,
// n²·R (its O(R·n²); pacer's own ZipLine is O(n·R·log n), so the charge
// prices the paper's search, not pacer's); GridScan scans R² candidates for
// each of n workers; FullGridScan n²·R²; brute force R^n combinations
// (capped at 10¹⁸). Counting work, not timing the search, keeps a run the
// same bytes for a seed.
func SearchWork(sp paradigm.Spec, n int) float64 {
	r := float64(sp.R)
	k := float64(n)
	switch sp.Search {
	case paradigm.SearchGridScan:
		return k * r * r
	case paradigm.SearchFullGridScan:
		return k * k * r * r
	case paradigm.SearchBrute:
		return math.Min(math.Pow(r, k), 1e18)
	}
	return k * k * r
}
