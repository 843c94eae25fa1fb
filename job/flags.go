package job

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
)

// LearnFlags are the learning flags every command that trains shares
// (pacer train, compare, server): bound once here so their names, defaults
// and meaning cannot drift apart between the virtual and the live drivers.
//
// Config reads a zero as "the default", so the flags refuse the values that
// Fill would replace (--epochs 0, --batch 0, --lr 0) or read differently
// (a negative --momentum, which Config takes for "none") when they are
// parsed: a bad value is an error naming the flag, never a silent default.
type LearnFlags struct {
	Model      string
	Dataset    string
	DataDir    string
	TrainLimit int
	TestLimit  int
	Epochs     float64
	Batch      int
	// BatchTotal is --batch-total; BatchSet says --batch was given.
	BatchTotal int
	BatchSet   bool
	LR         float64
	Momentum   float64 // in [0, 1); the flag's 0 is plain SGD
	// MomentumSet says --momentum was given: Adam takes none, so its
	// default (0.9) applies only to the other rules.
	MomentumSet bool
	Optimizer   optim.Rule
	WeightDecay float64
	FullAsyncLR bool
	Sampling    string
	Normalize   string
	ClipNorm    float64
	EMA         float64
	EMATime     time.Duration
}

// Bind registers the flags on fs.
func (f *LearnFlags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.Model, "model", DefaultModel, "model: "+strings.Join(nn.Names(), " | ")+" (its input shape is --dataset's; pacer server also takes flat:n=N with --init: a model of your own, trained by PyTorch workers)")
	fs.StringVar(&f.Dataset, "dataset", DefaultDataset, "data set: "+strings.Join(data.Names, " | "))
	fs.StringVar(&f.DataDir, "data-dir", "", "directory with the data set's files (default: $PACER_DATA, ./data/NAME, /usr/share/datasets/NAME, then download)")
	intFlag(fs, &f.TrainLimit, "train-limit", 0, "use only the first N training samples (an `int` ≥ 0; 0: all)", nonNegativeInt)
	intFlag(fs, &f.TestLimit, "test-limit", 0, "use only the first N test samples (an `int` ≥ 0; 0: all)", nonNegativeInt)
	floatFlag(fs, &f.Epochs, "epochs", DefaultEpochs, fmt.Sprintf("passes over the training set, all workers together (a `float` > 0, at most %d)", MaxEpochs), epochsRange)
	intFlag(fs, &f.Batch, "batch", DefaultBatch, fmt.Sprintf("samples per worker per iteration (an `int` in [1, %d])", MaxBatch), func(v int) error {
		f.BatchSet = true
		return batchRange(v)
	})
	intFlag(fs, &f.BatchTotal, "batch-total", 0, "keep the batch summed over the workers (µλ) at this `int`: each worker's batch is it divided by the workers, at least 1, as the staleness-aware paper keeps µλ constant when it adds learners (0: --batch; give one of the two)", nonNegativeInt)
	floatFlag(fs, &f.LR, "lr", DefaultLR, "base learning rate α₀ (a `float` > 0)", positive)
	floatFlag(fs, &f.Momentum, "momentum", DefaultMomentum, "momentum, a `float` in [0, 1) (0 for plain SGD; also rmsprop's; adam and adamw take none)", func(v float64) error {
		f.MomentumSet = true
		return unitInterval(v)
	})
	fs.Func("optimizer", "update rule on the shards, a `rule`: sgd (default; --momentum) | rmsprop[:alpha=A,eps=E,centered=true] (PyTorch's RMSprop, uncentered unless centered=true, with --momentum) | adam[:b1=B1,b2=B2,eps=E] (PyTorch's Adam, --weight-decay as L2; no --momentum) | adamw[:b1=B1,b2=B2,eps=E] (PyTorch's AdamW, --weight-decay decoupled; no --momentum); parameters left out take PyTorch's defaults (alpha 0.99, b1 0.9, b2 0.999, eps 1e-8)", func(v string) error {
		r, err := optim.ParseRule(v)
		if err != nil {
			return err
		}
		f.Optimizer = r
		return nil
	})
	floatFlag(fs, &f.WeightDecay, "weight-decay", 0, "weight decay (a `float` ≥ 0): L2 on the gradient, or adamw's decoupled decay w ← (1 − lr·wd)·w", nonNegative)
	floatFlag(fs, &f.ClipNorm, "clip-norm", 0, "scale each worker's gradient to at most this 2-norm before it is pushed, as PyTorch's clip_grad_norm_ (a `float` ≥ 0; 0: none)", nonNegative)
	floatFlag(fs, &f.EMA, "ema", 0, "evaluate the exponential moving average of the weights with this decay (a `float` in [0, 1), e.g. 0.9999; 0: the weights themselves; every mode: live, the shards keep it)", unitInterval)
	fs.DurationVar(&f.EMATime, "ema-time", 0, "evaluate a moving average of the weights that fades in the run's time: an update dt after the previous one weighs 1−exp(−dt/this) (a `duration`, e.g. 30s; 0: none; not with --ema). Every paradigm's average spans the same time whatever its update rate (docs/compare.md)")
	fs.Func("sampling", "where a worker's mini-batches come from: shard (its fixed 1/K of the training set; default) | global (the whole set, each worker through its own permutation, as the backup-workers and staleness-aware papers sample)", func(v string) error {
		if err := samplingValid(v); err != nil {
			return err
		}
		f.Sampling = v
		return nil
	})
	fs.Func("normalize", "what is done to the images before training: none (pixels/255; default) | mean (subtract the training set's per-channel mean, after --train-limit, from training and test images, as the papers' recipes do)", func(v string) error {
		if err := normalizeValid(v); err != nil {
			return err
		}
		f.Normalize = v
		return nil
	})
	fs.BoolVar(&f.FullAsyncLR, "full-async-lr", false, "apply each gradient of asp/ssp/dssp/elastic/delay with the whole α₀ (default α₀/K; see docs/paradigms.md)")
}

// ApplyTo copies the flags into c.
func (f *LearnFlags) ApplyTo(c *Config) {
	c.Model, c.Dataset, c.DataDir = f.Model, f.Dataset, f.DataDir
	c.TrainLimit, c.TestLimit = f.TrainLimit, f.TestLimit
	c.Epochs, c.Batch, c.LR, c.WeightDecay, c.FullAsyncLR = f.Epochs, f.Batch, f.LR, f.WeightDecay, f.FullAsyncLR
	c.Sampling, c.ClipNorm, c.EMA, c.EMATime = f.Sampling, f.ClipNorm, f.EMA, f.EMATime
	if c.BatchTotal = f.BatchTotal; c.BatchTotal > 0 && !f.BatchSet {
		c.Batch = 0 // Fill derives it from the workers
	}
	c.Optimizer = f.Optimizer
	c.Normalize = f.Normalize
	c.Momentum = f.Momentum
	if c.Momentum == 0 || (!f.Optimizer.Kind.TakesMomentum() && !f.MomentumSet) {
		c.Momentum = -1 // Config: zero means the default, negative means none
	}
}

// The checks of the numeric learning fields, the one home of each rule:
// the flags apply them when parsed (the flag package prefixes the flag's
// name and the value) and Fill to every job. Each returns the reason a
// value is refused.
func positive(v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return errors.New("must be a positive finite number")
	}
	return nil
}

func nonNegative(v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return errors.New("must be a finite number ≥ 0")
	}
	return nil
}

func epochsRange(v float64) error {
	if err := positive(v); err != nil {
		return err
	}
	if v > MaxEpochs {
		return fmt.Errorf("must be at most %d (docs/paradigms.md, Limits)", MaxEpochs)
	}
	return nil
}

func batchRange(v int) error {
	if v < 1 || v > MaxBatch {
		return fmt.Errorf("must lie in [1, %d] (docs/paradigms.md, Limits)", MaxBatch)
	}
	return nil
}

func unitInterval(v float64) error {
	if !(v >= 0 && v < 1) {
		return errors.New("must lie in [0, 1) (0 is plain SGD)")
	}
	return nil
}

func nonNegativeInt(v int) error {
	if v < 0 {
		return errors.New("must not be negative (0: all)")
	}
	return nil
}

// CheckEval refuses an --eval-every or --target that Config would read as
// its default or that means nothing (the one home of both rules: pacer
// train and compare, and pacer server, check their flags with it).
func CheckEval(evalEvery, target float64) error {
	if !(evalEvery > 0) || math.IsInf(evalEvery, 0) {
		return fmt.Errorf("--eval-every=%g must be a positive number of epochs", evalEvery)
	}
	if !(target >= 0 && target <= 1) {
		return fmt.Errorf("--target=%g must be an accuracy in [0, 1] (0: none)", target)
	}
	return nil
}

// checkedFloat is a float64 flag whose Set refuses what check refuses.
type checkedFloat struct {
	p     *float64
	check func(float64) error
}

func floatFlag(fs *pflag.FlagSet, p *float64, name string, def float64, usage string, check func(float64) error) {
	*p = def
	fs.Var(&checkedFloat{p, check}, name, usage)
}

func (c *checkedFloat) String() string {
	if c == nil || c.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*c.p, 'g', -1, 64)
}

func (c *checkedFloat) Type() string { return "float" }

func (c *checkedFloat) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return errors.New("not a number")
	}
	if err := c.check(v); err != nil {
		return err
	}
	*c.p = v
	return nil
}

// checkedInt is an int flag whose Set refuses what check refuses.
type checkedInt struct {
	p     *int
	check func(int) error
}

func intFlag(fs *pflag.FlagSet, p *int, name string, def int, usage string, check func(int) error) {
	*p = def
	fs.Var(&checkedInt{p, check}, name, usage)
}

func (c *checkedInt) String() string {
	if c == nil || c.p == nil {
		return "0"
	}
	return strconv.Itoa(*c.p)
}

func (c *checkedInt) Type() string { return "int" }

func (c *checkedInt) Set(s string) error {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not an integer")
	}
	if err := c.check(v); err != nil {
		return err
	}
	*c.p = v
	return nil
}
