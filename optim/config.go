package optim

import (
	"fmt"
	"math"
)

// Config is the update rule of one parameter range. The learning rate the server passes to Step
// is normally Config.Rate(step, epoch) times the apply's scale (job.Config.StepSize).
type Config struct {
	LR          float64  // base learning rate, > 0
	Momentum    float64  // μ in [0, 1); 0 is plain SGD and keeps no velocity
	WeightDecay float64  // L2 coefficient added to the update direction (AdamW: decoupled, w ← (1 − lr·wd)·w), ≥ 0
	Nesterov    bool     // Nesterov momentum (needs Momentum > 0)
	Schedule    Schedule // learning-rate schedule; the zero value is constant
	// Rule is the update rule: SGD (the zero value), RMSProp, Adam or
	// AdamW, with their own parameters. Momentum is RMSProp's too; Adam and
	// AdamW take none.
	Rule Rule `json:",omitzero"`
}

// ScheduleKind selects how the rate changes after warm-up.
type ScheduleKind int

const (
	// Constant keeps LR.
	Constant ScheduleKind = iota
	// StepDecay multiplies LR by Gamma every Every units (steps or epochs, see Unit).
	StepDecay
	// MultiStep multiplies LR by Gamma at each of the epochs in At (PyTorch's MultiStepLR:
	// the rate at epoch e is LR·Gamma^(number of milestones ≤ e)). A milestone may fall inside
	// an epoch (1.5: halfway through the second), so that a run scaled down to a few epochs
	// can keep a recipe's drops at the same share of its length.
	MultiStep
	// Exponential multiplies LR by Gamma every epoch (PyTorch's ExponentialLR stepped once an
	// epoch: LR·Gamma^e in epoch e).
	Exponential
)

// MaxMilestones bounds a MultiStep schedule's list.
const MaxMilestones = 64

// Unit is what a step-decay interval counts.
type Unit int

const (
	Steps  Unit = iota // optimizer steps (the zero value)
	Epochs             // passes over the data
)

// Schedule is a learning-rate schedule: an optional linear warm-up over the first Warmup steps,
// then Constant or StepDecay.
type Schedule struct {
	Kind  ScheduleKind
	Every int64     // StepDecay: interval between drops, ≥ 1
	Gamma float64   // StepDecay: factor per drop, in (0, 1]
	Unit  Unit      // StepDecay: whether Every counts Steps or Epochs
	At    []float64 `json:",omitempty"` // MultiStep: the epochs of the drops (fractions allowed), increasing, > 0
	// Warmup is the number of warm-up steps (0: none). During warm-up the rate rises linearly
	// from LR/WarmupDiv at step 0 to the scheduled rate at step Warmup (Goyal et al., 2017).
	Warmup    int64
	WarmupDiv float64 // k ≥ 1, required when Warmup > 0
}

// Validate reports the first bad field, naming it and its value.
func (c Config) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("optim: Config.%s = %v, must be %s", field, v, want)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	s := c.Schedule
	switch {
	case !(c.LR > 0) || !finite(c.LR):
		return bad("LR", c.LR, "> 0 and finite")
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return bad("Momentum", c.Momentum, "in [0, 1)")
	case !(c.WeightDecay >= 0) || !finite(c.WeightDecay):
		return bad("WeightDecay", c.WeightDecay, "≥ 0 and finite")
	case c.Nesterov && c.Momentum == 0:
		return bad("Nesterov", c.Nesterov, "false when Momentum is 0")
	case s.Kind != Constant && s.Kind != StepDecay && s.Kind != MultiStep && s.Kind != Exponential:
		return bad("Schedule.Kind", int(s.Kind), "Constant, StepDecay, MultiStep or Exponential")
	case c.validateRule() != nil:
		return c.validateRule()
	case (s.Kind == MultiStep || s.Kind == Exponential) && !(s.Gamma > 0 && s.Gamma <= 1):
		return bad("Schedule.Gamma", s.Gamma, "in (0, 1]")
	case s.Kind == MultiStep && (len(s.At) == 0 || len(s.At) > MaxMilestones):
		return bad("Schedule.At", s.At, fmt.Sprintf("1 to %d epochs for MultiStep", MaxMilestones))
	case s.Kind != MultiStep && len(s.At) > 0:
		return bad("Schedule.At", s.At, "empty unless MultiStep")
	case s.Kind == StepDecay && s.Every < 1:
		return bad("Schedule.Every", s.Every, "≥ 1 for StepDecay")
	case s.Kind == StepDecay && !(s.Gamma > 0 && s.Gamma <= 1):
		return bad("Schedule.Gamma", s.Gamma, "in (0, 1] for StepDecay")
	case s.Unit != Steps && s.Unit != Epochs:
		return bad("Schedule.Unit", int(s.Unit), "Steps or Epochs")
	case s.Warmup < 0:
		return bad("Schedule.Warmup", s.Warmup, "≥ 0")
	case !milestonesValid(s.At):
		return bad("Schedule.At", s.At, "increasing finite epochs > 0")
	case s.Warmup > 0 && !(s.WarmupDiv >= 1 && finite(s.WarmupDiv)):
		return bad("Schedule.WarmupDiv", s.WarmupDiv, "≥ 1 and finite when Warmup > 0")
	}
	return nil
}

func milestonesValid(at []float64) bool {
	for i, m := range at {
		if !(m > 0) || math.IsInf(m, 1) || (i > 0 && m <= at[i-1]) {
			return false
		}
	}
	return true
}

// Rate is the learning rate for a step (0-based count of optimizer steps) at a point of
// training counted in epochs (0-based, fractional: 2.5 is halfway through the third epoch).
// StepDecay by epochs and Exponential count whole epochs (the floor); MultiStep compares the
// fraction with its milestones. Negative counts are treated as 0.
func (c Config) Rate(step int64, epoch float64) float64 {
	step, epoch = max(step, 0), max(epoch, 0)
	s := c.Schedule
	lr := c.LR
	if s.Kind == StepDecay && s.Every > 0 {
		t := step
		if s.Unit == Epochs {
			t = int64(epoch)
		}
		lr *= math.Pow(s.Gamma, float64(t/s.Every))
	}
	switch s.Kind {
	case MultiStep:
		n := 0
		for _, m := range s.At {
			if epoch >= m {
				n++
			}
		}
		lr *= math.Pow(s.Gamma, float64(n))
	case Exponential:
		lr *= math.Pow(s.Gamma, math.Floor(epoch))
	}
	if s.Warmup > 0 && step < s.Warmup && s.WarmupDiv >= 1 {
		start := 1 / s.WarmupDiv
		lr *= start + (1-start)*float64(step)/float64(s.Warmup)
	}
	return lr
}
