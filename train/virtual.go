package train

import (
	"context"
	"fmt"
	"github.com/pacer-ps/pacer/gradnoise"
	"math"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/sim"
)

// Progress is reported after every test evaluation.
type Progress struct {
	Epoch    float64       // epochs done, all workers together
	Accuracy float64       // test accuracy of the shards' weights
	Virtual  time.Duration // virtual time
	Wall     time.Duration // wall time since the start
}

// Iterations is how many iterations per worker cfg.Epochs take on a
// training set of n samples: what a run without a horizon does.
func Iterations(cfg job.Config, n int) int {
	return max(1, int(math.Ceil(cfg.Epochs*float64(n)/float64(cfg.Batch*cfg.Workers))))
}

// Options are a virtual run's optional parts; a nil *Options has none.
type Options struct {
	// Progress, when set, is called at every evaluation.
	Progress func(Progress)
	// Plan, when set, completes the simulator's configuration before the
	// run: auto.Configure attaches --paradigm auto's planner (without it
	// sim refuses auto). The planner is handed in because it sits beside
	// train over sim, not under it (docs/architecture.md).
	Plan func(*sim.Config)
}

// Virtual trains cfg in virtual time on ds (nil: load it) and returns the
// run's summary: for cfg.Epochs, or until cfg.Horizon of virtual time when
// that is set. ds is only read, so runs may share it.
func Virtual(cfg job.Config, ds *data.Dataset, opt *Options) (*runstats.Run, error) {
	return VirtualContext(context.Background(), cfg, ds, opt)
}

// VirtualContext is Virtual stopped when ctx is done (sim.RunContext): it
// then returns an error wrapping ctx's and no summary.
func VirtualContext(ctx context.Context, cfg job.Config, ds *data.Dataset, opt *Options) (*runstats.Run, error) {
	if opt == nil {
		opt = &Options{}
	}
	if err := cfg.Fill(); err != nil {
		return nil, err
	}
	if ds == nil {
		var err error
		if ds, err = job.Data(cfg); err != nil {
			return nil, err
		}
	} else if err := job.CheckNormalized(ds, cfg); err != nil {
		return nil, err
	}
	l, err := newLearner(cfg, ds, opt.Progress)
	if err != nil {
		return nil, err
	}
	iters := Iterations(cfg, ds.Train.N)
	if cfg.Horizon > 0 {
		iters = 0 // sim.Config: run until Duration
	}
	sc := sim.Config{Spec: cfg.Spec, Workers: cfg.Workers, Shards: cfg.Shards,
		Timing: cfg.Timing, ServerDelay: cfg.ServerDelay, Iterations: iters, Duration: cfg.Horizon, Seed: cfg.Seed,
		Network: cfg.Network, Params: l.model.NumParams(), Learner: l, Clock: time.Now, SearchCost: cfg.SimSearchCost()}
	if opt.Plan != nil {
		opt.Plan(&sc)
	}
	r, err := sim.RunContext(ctx, sc)
	if err != nil {
		return nil, err
	}
	l.evaluate(time.Duration(r.VirtualSeconds * float64(time.Second)))
	r.Mode, r.Model, r.Sampling = runstats.Virtual, cfg.Model, cfg.Sampling
	r.Normalize, r.ChannelMean = cfg.Normalize, ds.Mean
	learnt := float64(l.nLearnt) / float64(len(l.learnt))
	r.SamplesLearnt = &learnt
	r.SetCurve(l.curve, cfg.Target)
	r.CurveEpochs, r.TrainLoss, r.BatchLoss = l.epochs, l.trainLoss, l.batchLoss
	r.SetTargets(cfg.Targets)
	return r, nil
}

// learner implements sim.Learner with real gradients.
type learner struct {
	cfg      job.Config
	ds       *data.Dataset
	model    nn.Model
	w        []float32 // the shards' weights, concatenated
	ranges   [][2]int  // shard i owns w[lo:hi]
	opts     []*optim.Optimizer
	oc       optim.Config
	local    [][]float32 // each worker's copy of the weights
	staged   [][]float32 // snapshots in flight to each worker
	batchers []*data.Batcher
	grads    map[uint64]*grad
	free     []*grad
	nextID   uint64
	slices   [][]float32
	weights  []float32

	version    uint64  // shard 0's version: the optimizer's step count
	superEpoch float64 // ElasticBSP local-only: the epoch when the open superstep began
	samples    int64   // samples consumed by computes so far
	nextEval   float64 // next evaluation, in epochs
	curve      [][2]float64
	epochs     []float64       // the epoch of each evaluation
	trainLoss  []float64       // the evaluated weights' loss on the training subset
	lossGrad   []float32       // scratch for that loss (Grad computes a gradient too)
	ema        []float32       // the weights' moving average (job.Config.EMA or EMATime), nil without
	emaAt      []time.Duration // each shard's last update, for EMATime
	learnt     []bool          // per training sample: in an applied gradient yet
	nLearnt    int
	pred       []uint8
	progress   func(Progress)
	wallStart  time.Time
	now        time.Duration

	// batchLoss is, at each evaluation, the mean loss of the mini-batches
	// computed since the previous one (nil: none), as the live modes
	// record it from the workers' reports; lossSum and losses total them.
	batchLoss []*float64
	lossSum   float64
	losses    int64
	// noise measures the gradient noise scale for auto's planner (nil
	// unless the run is --paradigm auto: it costs an apply's time again).
	noise *gradnoise.Meter
	// rule is the paradigm in force: the job's, or under --paradigm auto
	// the candidate the simulator switched to last (Switched).
	rule paradigm.Spec
}

type grad struct {
	g    []float32
	refs int
	idx  []int // the samples it was computed on
}

func newLearner(cfg job.Config, ds *data.Dataset, progress func(Progress)) (*learner, error) {
	m, err := job.NewModel(cfg)
	if err != nil {
		return nil, err
	}
	if err := nn.CheckData(m, ds.Train.Name, ds.Train.Dim, ds.Train.Classes); err != nil {
		return nil, err
	}
	n := m.NumParams()
	if cfg.Shards > n {
		return nil, fmt.Errorf("shards=%d exceeds the model's %d parameters", cfg.Shards, n)
	}
	l := &learner{cfg: cfg, ds: ds, model: m, w: make([]float32, n), ranges: job.Ranges(n, cfg.Shards),
		oc: cfg.Optim(), grads: map[uint64]*grad{}, progress: progress, wallStart: time.Now(), nextEval: cfg.EvalEvery,
		learnt: make([]bool, ds.Train.N)}
	l.rule = cfg.Spec.Start()
	if cfg.Spec.Kind == paradigm.Auto {
		l.noise = gradnoise.New(cfg.Batch)
	}
	m.Init(l.w, cfg.Seed) // every worker starts from the same seeded w⁰
	if cfg.Averaged() {
		l.ema = append([]float32(nil), l.w...)
		l.emaAt = make([]time.Duration, len(l.ranges))
	}
	oc := cfg.Optim()
	for _, r := range l.ranges {
		o, err := optim.New(oc, r[1]-r[0])
		if err != nil {
			return nil, err
		}
		l.opts = append(l.opts, o)
	}
	for p := 0; p < cfg.Workers; p++ {
		b, err := data.NewBatcher(ds.Train, data.BatcherConfig{Worker: p, Workers: cfg.Workers, Batch: cfg.Batch, Seed: cfg.Seed, Global: cfg.Global()})
		if err != nil {
			return nil, err
		}
		l.batchers = append(l.batchers, b)
		l.local = append(l.local, append([]float32(nil), l.w...))
		l.staged = append(l.staged, make([]float32, n))
	}
	l.evaluate(0)
	return l, nil
}

func (l *learner) Serve(now time.Duration, p, i int) {
	r := l.ranges[i]
	copy(l.staged[p][r[0]:r[1]], l.w[r[0]:r[1]])
}

func (l *learner) Deliver(now time.Duration, p, i int) {
	r := l.ranges[i]
	copy(l.local[p][r[0]:r[1]], l.staged[p][r[0]:r[1]])
}

func (l *learner) Compute(now time.Duration, p int) uint64 {
	if float64(l.samples)/float64(l.ds.Train.N) >= l.nextEval {
		l.evaluate(now)
		for l.nextEval <= float64(l.samples)/float64(l.ds.Train.N) {
			l.nextEval += l.cfg.EvalEvery
		}
	}
	b := l.batchers[p].Next()
	var g *grad
	if n := len(l.free); n > 0 {
		g, l.free = l.free[n-1], l.free[:n-1]
	} else {
		g = &grad{g: make([]float32, len(l.w))}
	}
	l.lossSum += float64(l.model.Grad(l.local[p], g.g, b.X, b.Y, b.N))
	l.losses++
	if l.cfg.ClipNorm > 0 {
		optim.ClipNorm(g.g, l.cfg.ClipNorm)
	}
	g.idx = append(g.idx[:0], b.Indices...)
	if l.rule.LocalSteps() {
		// ElasticBSP local-only: the worker steps its own copy with plain
		// SGD at the shards' current rate; the barrier's pull replaces it.
		lr := l.oc.Rate(int64(l.version), l.superEpoch)
		kernel.AxpyUnitary(float32(-lr), g.g, l.local[p])
	}
	g.refs = len(l.ranges)
	l.nextID++
	l.grads[l.nextID] = g
	l.samples += int64(b.N)
	return l.nextID
}

func (l *learner) Apply(now time.Duration, i int, a paradigm.Apply) {
	r := l.ranges[i]
	l.slices, l.weights = l.slices[:0], l.weights[:0]
	for _, c := range a.Grads {
		g := l.grads[c.ID]
		l.slices = append(l.slices, g.g[r[0]:r[1]])
		l.weights = append(l.weights, float32(c.Weight))
		if i == 0 && c.Weight != 0 {
			for _, k := range g.idx {
				if !l.learnt[k] {
					l.learnt[k] = true
					l.nLearnt++
				}
			}
		}
	}
	epoch := float64(l.samples) / float64(l.ds.Train.N)
	if l.rule.LocalSteps() {
		// The superstep's rate is the one its local steps used: the rate
		// at its start, even when an epoch boundary fell inside it.
		epoch = l.superEpoch
		if i == len(l.ranges)-1 {
			defer func() { l.superEpoch = float64(l.samples) / float64(l.ds.Train.N) }()
		}
	}
	lr := l.cfg.StepSizeUnder(l.rule, a, epoch)
	if i == 0 {
		l.version = a.Version
	}
	if l.noise != nil {
		l.noise.Add(l.slices)
	}
	l.opts[i].ApplyWeighted(l.w[r[0]:r[1]], l.slices, l.weights, float32(lr))
	if l.ema != nil {
		optim.EMA(l.ema[r[0]:r[1]], l.w[r[0]:r[1]], l.cfg.EMADecay(now-l.emaAt[i]))
		l.emaAt[i] = now
	}
	for _, c := range a.Grads {
		l.release(c.ID)
	}
}

func (l *learner) Drop(now time.Duration, i int, id uint64) { l.release(id) }

func (l *learner) release(id uint64) {
	g := l.grads[id]
	if g.refs--; g.refs == 0 {
		delete(l.grads, id)
		l.free = append(l.free, g)
	}
}

// loss is the mean cross-entropy of weights w on the first
// runstats.TrainLossSamples training samples, in batches of 250.
func (l *learner) loss(w []float32) float64 {
	set := l.ds.Train
	n := min(set.N, runstats.TrainLossSamples)
	if l.lossGrad == nil {
		l.lossGrad = make([]float32, len(w))
	}
	return nn.Loss(l.model, w, l.lossGrad, set.X[:n*set.Dim], set.Y[:n], runstats.TrainLossBatch)
}

// evaluate records the test accuracy of the shards' weights at virtual time now.
func (l *learner) evaluate(now time.Duration) {
	if n := len(l.curve); n > 0 && l.curve[n-1][0] == now.Seconds() {
		return
	}
	w := l.w
	if l.ema != nil {
		w = l.ema
	}
	acc := nn.Accuracy(l.model, w, l.ds.Test.X, l.ds.Test.Y, 500)
	l.curve = append(l.curve, [2]float64{now.Seconds(), acc})
	l.epochs = append(l.epochs, float64(l.samples)/float64(l.ds.Train.N))
	l.trainLoss = append(l.trainLoss, l.loss(w))
	var mean *float64
	if l.losses > 0 {
		m := l.lossSum / float64(l.losses)
		mean = &m
	}
	l.batchLoss = append(l.batchLoss, mean)
	l.lossSum, l.losses = 0, 0
	if l.progress != nil {
		l.progress(Progress{Epoch: float64(l.samples) / float64(l.ds.Train.N), Accuracy: acc,
			Virtual: now, Wall: time.Since(l.wallStart)})
	}
}
