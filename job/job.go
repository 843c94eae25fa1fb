// Package job is the description of one training job that every training
// mode shares: virtual time (package train), and the live server in process
// or over TCP (package live). It holds no behaviour beyond defaults and
// validation, so both drivers read the same flags the same way.
package job

import (
	"fmt"
	"math"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// The defaults of a job's fields: Fill gives them to zero fields, and the
// flags of every command that builds a job show them, so each has one home.
const (
	DefaultWorkers          = 1
	DefaultShards           = 1
	DefaultModel            = "mlp"
	DefaultDataset          = "fashion-mnist"
	DefaultEpochs           = 1.0
	DefaultBatch            = 64
	DefaultLR               = 0.05
	DefaultMomentum         = 0.9
	DefaultSeed             = 1
	DefaultEvalEvery        = 0.25
	DefaultHeartbeatTimeout = 15 * time.Second // a worker starved 10 s stays, a dead one goes within 30 s (docs/protocol.md)
	// DefaultSearchCost prices a unit of barrier-search work (one step
	// of the paper's ZipLine, n²·R a search: sim.SearchWork). At 4 workers
	// and R = 15 a barrier is then charged 0.96 µs, about what pacer's
	// own ZipLine takes there (0.7 µs, docs/benchmarks.md "ZipLine");
	// the ElasticBSP paper's Table II is 16–99 ns a unit.
	DefaultSearchCost = 4 * time.Nanosecond
)

// Config is a training job. Zero fields take the documented defaults (Fill).
type Config struct {
	Spec    paradigm.Spec
	Workers int // default 1
	Shards  int // default 1

	Model string // nn.Names (mlp default), shaped by Dataset (NewModel), or flat:n=N
	// InitSHA256 is, for a flat model (a user's own network that pacer
	// knows only as N floats; package nn, ParseFlat), the SHA-256 of the
	// initial weights every shard starts from (pacer server --init), so a
	// shard given another file is refused as another job. Empty for
	// pacer's models, which initialize from Seed.
	InitSHA256 string `json:",omitempty"`
	Dataset    string // fashion-mnist | mnist | cifar10 | synthetic (default fashion-mnist)
	DataDir    string // --data-dir; "" follows the resolution order of package data
	// TrainLimit and TestLimit cut the data sets to their first N samples
	// (0: all), for quick runs and tests.
	TrainLimit, TestLimit int

	Epochs float64 // passes over the training set, all workers together (default 1)
	Batch  int     // samples per worker per iteration (default 64)
	// BatchTotal, when positive, keeps µλ (the batch summed over the
	// workers) constant, as the staleness-aware paper does when it adds
	// learners: Fill sets Batch to BatchTotal/Workers, at least 1.
	BatchTotal  int     `json:",omitempty"`
	LR          float64 // base learning rate α₀ (default 0.05)
	Momentum    float64 // default 0.9 (none for adam and adamw); negative means none (and stays negative: Fill is idempotent)
	WeightDecay float64
	// Optimizer is the update rule (optim.Rule): SGD, the zero value
	// (omitted from descriptions, so one written before the field existed
	// reads as SGD), PyTorch's RMSprop with Momentum as its momentum
	// (centered or not), or PyTorch's Adam or AdamW, which take no
	// momentum; AdamW's WeightDecay is decoupled, everyone else's is L2.
	Optimizer optim.Rule     `json:",omitzero"`
	Schedule  optim.Schedule // learning-rate schedule (default constant)
	Seed      uint64         // default 1
	// FullAsyncLR applies every gradient of the apply-on-arrival paradigms
	// (asp, ssp, dssp, elastic, and delay) with the whole α₀, as the papers' formulas
	// read literally. By default each such gradient steps α₀/K: one gradient
	// is a K-th of a BSP round, so every paradigm moves the weights by the same
	// amount per sample and a comparison at one --lr is fair (with the literal
	// rule ASP at K workers takes K times BSP's step and diverges at rates BSP
	// trains well with). See docs/paradigms.md.
	FullAsyncLR bool
	// Sampling is where a worker's mini-batches come from: "" (or
	// "shard", its fixed 1/K of the training set) or "global" (the whole
	// set, through its own permutation; SamplingGlobal).
	Sampling string `json:",omitempty"`
	// Normalize is what is done to the features before training: "" (or
	// "none", pixels/255 as loaded) or "mean" (NormalizeMean: the
	// training set's per-channel mean, after TrainLimit, is subtracted
	// from training and test images; Data).
	Normalize string `json:",omitempty"`
	// ClipNorm, when positive, scales each worker's gradient to at most
	// this 2-norm before it is pushed (optim.ClipNorm; PyTorch's
	// clip_grad_norm_).
	ClipNorm float64 `json:",omitempty"`
	// EMA, when positive, evaluates the exponential moving average of the
	// weights, θ̄ ← EMA·θ̄ + (1−EMA)·θ after every update, instead of θ
	// (the backup-workers paper evaluates θ̄ with 0.9999). Virtual time's
	// learner and the live shards (each its block, checkpointed) keep θ̄.
	EMA float64 `json:",omitempty"`
	// EMATime, when positive, evaluates a moving average of the weights
	// whose memory fades in the run's time rather than per update: an
	// update applied dt after the shard's previous one (the first: dt from
	// the start) moves θ̄ ← a·θ̄ + (1−a)·θ with a = exp(−dt/EMATime). Every
	// paradigm's average then spans the same time whatever its update rate,
	// where EMA's spans a number of updates (docs/compare.md, "Averaged
	// weights"). Time is virtual time in virtual mode, the shard's clock
	// live; an update at the instant of the previous one (dt = 0) moves
	// nothing. Not with EMA.
	EMATime time.Duration `json:",omitempty"`

	// EvalEvery is the test-accuracy interval in epochs (default 0.25).
	EvalEvery float64
	Target    float64 // accuracy whose first crossing is reported (0: none)
	// Targets are further accuracies whose first crossings are reported,
	// in time and in epochs (runstats.Run.SetTargets).
	Targets []float64 `json:",omitempty"`

	// The cluster's speeds and delays (virtual time simulates them, the
	// live modes emulate them: live/worker/pace.go, live/emulate.go), and its
	// network (nil: instant transfers; package network). The straggler
	// and server-delay models are parsed values, written as their text.
	Timing      timing.WorkerSpec
	ServerDelay timing.ServerDelay
	// SearchCost is the simulated server's time per unit of ElasticBSP
	// barrier-search work (sim.Config.SearchCost; default
	// DefaultSearchCost, negative: free).
	SearchCost time.Duration `json:",omitempty"`
	Network    *network.Spec `json:",omitempty"`
	// Horizon, when set, ends a virtual-time run at this virtual time
	// instead of after Epochs, so that every paradigm of a comparison is
	// judged over the same time budget (pacer compare's equal horizons).
	Horizon time.Duration

	// Live modes only.
	HeartbeatTimeout time.Duration // default 15 s
}

// Fill sets defaults and validates, naming the bad field. Filling twice
// changes nothing.
func (c *Config) Fill() error {
	if c.Spec.Kind == 0 {
		c.Spec = paradigm.Spec{Kind: paradigm.BSP}
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Workers, DefaultWorkers)
	def(&c.Shards, DefaultShards)
	if c.BatchTotal < 0 || c.BatchTotal > MaxBatch*MaxWorkers {
		return fmt.Errorf("batch-total=%d: want 0 (use batch) or 1 to %d", c.BatchTotal, MaxBatch*MaxWorkers)
	}
	if c.BatchTotal > 0 && c.Workers > 0 {
		b := max(1, c.BatchTotal/c.Workers)
		if c.Batch != 0 && c.Batch != b {
			return fmt.Errorf("batch=%d and batch-total=%d on %d workers: give one (batch-total makes the batch %d)", c.Batch, c.BatchTotal, c.Workers, b)
		}
		c.Batch = b
	}
	def(&c.Batch, DefaultBatch)
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Dataset == "" {
		c.Dataset = DefaultDataset
	}
	if c.Epochs == 0 {
		c.Epochs = DefaultEpochs
	}
	if c.LR == 0 {
		c.LR = DefaultLR
	}
	if c.Momentum == 0 {
		c.Momentum = DefaultMomentum
		if !c.Optimizer.Kind.TakesMomentum() {
			c.Momentum = -1 // Adam's β1 does momentum's work: the default is none
		}
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.EvalEvery == 0 {
		c.EvalEvery = DefaultEvalEvery
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.SearchCost == 0 {
		c.SearchCost = DefaultSearchCost
	}
	// The learning fields' rules are the ones their flags apply when
	// parsed (flags.go): one rule each, checked here for every other way a
	// job is built (a scenario, a description, a library caller).
	for _, f := range []struct {
		name string
		v    any
		err  error
	}{
		{"batch", c.Batch, batchRange(c.Batch)},
		{"epochs", c.Epochs, epochsRange(c.Epochs)},
		{"lr", c.LR, positive(c.LR)},
		{"weight-decay", c.WeightDecay, nonNegative(c.WeightDecay)},
		{"clip-norm", c.ClipNorm, nonNegative(c.ClipNorm)},
		{"ema", c.EMA, unitInterval(c.EMA)},
		{"train-limit", c.TrainLimit, nonNegativeInt(c.TrainLimit)},
		{"test-limit", c.TestLimit, nonNegativeInt(c.TestLimit)},
	} {
		if f.err != nil {
			return fmt.Errorf("%s=%v: %v", f.name, f.v, f.err)
		}
	}
	switch {
	case c.Workers < 1:
		return fmt.Errorf("workers=%d: need at least 1", c.Workers)
	case c.Shards < 1:
		return fmt.Errorf("shards=%d: need at least 1", c.Shards)
	case c.Momentum >= 1:
		return fmt.Errorf("momentum=%g must be below 1", c.Momentum)
	case !c.Optimizer.Kind.TakesMomentum() && c.Momentum > 0:
		return fmt.Errorf("momentum=%g: %s takes no momentum (its b1 averages the gradient instead); leave --momentum unset or 0", c.Momentum, c.Optimizer.Kind)
	case !(c.EvalEvery > 0):
		return fmt.Errorf("eval-every=%g must be positive", c.EvalEvery)
	case c.Target < 0 || c.Target > 1:
		return fmt.Errorf("target=%g must be an accuracy in [0, 1]", c.Target)
	case len(c.Targets) > MaxTargets:
		return fmt.Errorf("targets: %d accuracies, at most %d", len(c.Targets), MaxTargets)
	case c.HeartbeatTimeout < 0:
		return fmt.Errorf("heartbeat-timeout=%s must be positive", c.HeartbeatTimeout)
	case c.Horizon < 0:
		return fmt.Errorf("horizon=%s must not be negative", c.Horizon)
	case c.EMATime < 0:
		return fmt.Errorf("ema-time=%s must not be negative", c.EMATime)
	case c.EMATime > 0 && c.EMA > 0:
		return fmt.Errorf("ema-time=%s with ema=%g: the average fades in time or per update, give one of the two", c.EMATime, c.EMA)
	case c.InitSHA256 != "" && !isDigest(c.InitSHA256):
		return fmt.Errorf("init-sha256=%q: want the 64 lowercase hex digits of a SHA-256", c.InitSHA256)
	}
	for _, a := range c.Targets {
		if !(a > 0 && a <= 1) {
			return fmt.Errorf("targets: %g is not an accuracy in (0, 1]", a)
		}
	}
	if err := samplingValid(c.Sampling); err != nil {
		return fmt.Errorf("sampling=%q: %v", c.Sampling, err)
	}
	if c.Sampling == SamplingShard {
		c.Sampling = "" // one spelling of the default: descriptions and fingerprints agree
	}
	if err := normalizeValid(c.Normalize); err != nil {
		return fmt.Errorf("normalize=%q: %v", c.Normalize, err)
	}
	if c.Normalize == NormalizeNone {
		c.Normalize = ""
	}
	if err := (Size{Workers: c.Workers, Shards: c.Shards, Epochs: c.Epochs, Batch: c.Batch, Specs: []paradigm.Spec{c.Spec},
		Horizon: c.Horizon, Base: c.Timing.Base, FastestSpeed: FastestSpeed(c.Timing.Speeds), Speeds: c.Timing.Speeds,
		Jitter: c.Timing.Jitter}).Check(""); err != nil {
		return err
	}
	if err := c.Timing.Check(c.Workers); err != nil {
		return fmt.Errorf("straggler=%q: %w", c.Timing.Straggler, err)
	}
	if err := c.ServerDelay.Check(c.Shards); err != nil {
		return fmt.Errorf("server-delay=%q: %w", c.ServerDelay, err)
	}
	if err := c.Optim().Validate(); err != nil {
		return err
	}
	if c.Network != nil {
		if _, err := network.New(*c.Network, c.Workers, c.Shards); err != nil {
			return err
		}
	}
	return c.Spec.Validate(paradigm.Config{Workers: c.Workers, Shards: c.Shards})
}

// SimSearchCost is SearchCost as sim.Config takes it (0: free).
func (c *Config) SimSearchCost() time.Duration { return max(0, c.SearchCost) }

// MaxTargets bounds Config.Targets (--targets).
const MaxTargets = 16

// The sampling modes (Config.Sampling).
const (
	SamplingShard  = "shard"
	SamplingGlobal = "global"
)

func samplingValid(v string) error {
	if v != "" && v != SamplingShard && v != SamplingGlobal {
		return fmt.Errorf("want %s or %s", SamplingShard, SamplingGlobal)
	}
	return nil
}

// The normalizations (Config.Normalize).
const (
	NormalizeNone = "none"
	NormalizeMean = "mean"
)

func normalizeValid(v string) error {
	if v != "" && v != NormalizeNone && v != NormalizeMean {
		return fmt.Errorf("want %s or %s", NormalizeNone, NormalizeMean)
	}
	return nil
}

// Global is whether workers draw from the whole training set.
func (c *Config) Global() bool { return c.Sampling == SamplingGlobal }

func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// StepSize is the effective step size of one apply a made at epoch
// (0-based and fractional, all workers' samples together): the schedule's rate at the apply's
// optimizer step times StepScale. Every training driver (virtual time, a
// live shard) calls it, so virtual and live runs step alike.
func (c *Config) StepSize(a paradigm.Apply, epoch float64) float64 {
	return c.StepSizeUnder(c.Spec.Start(), a, epoch)
}

// StepSizeUnder is StepSize for an apply of rule, the paradigm in force:
// under --paradigm auto, the candidate the job runs at the time.
func (c *Config) StepSizeUnder(rule paradigm.Spec, a paradigm.Apply, epoch float64) float64 {
	return c.Optim().Rate(int64(a.Version)-1, epoch) * c.StepScale(rule, a)
}

// StepScale is the factor on α₀ for one apply of rule: the aggregator's
// own scale (PSP's d/K, 1 elsewhere) and, unless FullAsyncLR, 1/K for the
// paradigms that apply each gradient alone (on arrival, or delay's one at
// a time).
func (c *Config) StepScale(rule paradigm.Spec, a paradigm.Apply) float64 {
	s := a.LRScale
	if !c.FullAsyncLR && rule.OneGradientPerApply() {
		s /= float64(c.Workers)
	}
	return s
}

// Optim is the optimizer configuration every shard applies.
func (c *Config) Optim() optim.Config {
	return optim.Config{LR: c.LR, Momentum: max(0, c.Momentum), WeightDecay: c.WeightDecay, Schedule: c.Schedule, Rule: c.Optimizer}
}

// Ranges cuts n parameters into s contiguous shard ranges [lo, hi) of
// near-equal size: the key ranges of DESIGN.md.
func Ranges(n, s int) [][2]int {
	out := make([][2]int, s)
	for i := range out {
		out[i] = [2]int{i * n / s, (i + 1) * n / s}
	}
	return out
}

// Averaged reports whether the job evaluates a moving average of the
// weights (EMA or EMATime) rather than the weights themselves.
func (c *Config) Averaged() bool { return c.EMA > 0 || c.EMATime > 0 }

// EMADecay is the moving average's decay a for an update applied dt after
// the previous one (θ̄ ← a·θ̄ + (1−a)·θ): EMA per update, or the fading of
// EMATime over dt. The time is an argument: virtual time's learner and a
// live shard each pass their own.
func (c *Config) EMADecay(dt time.Duration) float64 {
	if c.EMATime <= 0 {
		return c.EMA
	}
	return math.Exp(-float64(max(dt, 0)) / float64(c.EMATime))
}
