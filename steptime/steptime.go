// Package steptime resolves `base: auto` (`--base auto`): the iteration
// time of a speed-1 worker, measured once on this machine as the model's
// step at its batch (nn.Step, the step `go test -bench TrainStep` times)
// or derived from another device's FLOP/s (nn.StepFLOPs), and rounded to
// two significant digits so that the value written into a scenario reruns
// to the same bytes anywhere. It reads no clock of its own: the clock is
// an argument, so its rules are tested with a clock the test drives.
package steptime

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/nn"
)

// Round2 rounds d to two significant digits (half away from zero): 4.234ms
// is 4.2ms, 0.7719ms 770µs, 16.44ms 16ms. A duration under 10 ns is kept.
func Round2(d time.Duration) time.Duration {
	if d < 10 {
		return d
	}
	unit := time.Duration(1)
	for d/unit >= 100 {
		unit *= 10
	}
	return (d + unit/2) / unit * unit
}

// The measurement: one step to warm up (the model's buffers grow on its
// first batch), then rounds of steps, each at least roundTime; the step
// time is the median of the rounds' means, so one round slowed by another
// process on a shared machine does not move it. 5 × 200 ms is about the
// second `go test -bench` spends on a benchmark.
const (
	rounds    = 5
	roundTime = 200 * time.Millisecond
	maxSteps  = 1 << 20 // per round: a bound, should the clock not advance
)

// Measure times step with the clock now and returns its mean duration
// (not rounded).
func Measure(step func(), now func() time.Duration) (time.Duration, error) {
	step()
	means := make([]time.Duration, 0, rounds)
	for range rounds {
		t0 := now()
		var n int64
		var el time.Duration
		for n < maxSteps && el < roundTime {
			step()
			n++
			el = now() - t0
		}
		if el <= 0 {
			return 0, fmt.Errorf("steptime: %d steps took no time on the clock", n)
		}
		means = append(means, el/time.Duration(n))
	}
	slices.Sort(means)
	return means[len(means)/2], nil
}

// Request is what auto times: the model (nn.Names) on samples of Shape
// (the data set's), Batch samples a step; DeviceRate, when positive, is
// another device's FLOP/s, which replaces the measurement.
type Request struct {
	Model      string
	Shape      nn.Shape
	Batch      int
	DeviceRate float64
}

// maxSeconds bounds a step a device rate gives (a Duration holds 292 years).
const maxSeconds = 1e9

// MaxDeviceRate bounds --device-rate at 10²⁰ FLOP/s, far above any device.
const MaxDeviceRate = 1e20

// Result is a resolved base: Base, rounded, is what the runs use and the
// summary records; Raw is the measurement or the FLOPs' quotient before
// rounding.
type Result struct {
	Base, Raw time.Duration
	How       string // where Base came from, in words
}

// String is the line a command prints, e.g. "base: auto → 4.2ms
// (measured: the mlp's step at batch 32 on this machine)".
func (r Result) String() string { return fmt.Sprintf("base: auto → %s (%s)", r.Base, r.How) }

// Resolve times q's step with the clock now (or divides its FLOPs by
// q.DeviceRate) and rounds it.
func Resolve(q Request, now func() time.Duration) (Result, error) {
	if q.Batch < 1 {
		return Result{}, fmt.Errorf("steptime: batch=%d: need at least 1", q.Batch)
	}
	if q.DeviceRate != 0 && (!(q.DeviceRate > 0) || q.DeviceRate > MaxDeviceRate) {
		return Result{}, fmt.Errorf("device-rate=%g: want FLOP/s, a number in (0, %g]", q.DeviceRate, float64(MaxDeviceRate))
	}
	var r Result
	if q.DeviceRate > 0 {
		m, err := nn.New(q.Model, q.Shape)
		if err != nil {
			return Result{}, err
		}
		flops, err := nn.StepFLOPs(m, q.Batch)
		if err != nil {
			return Result{}, err
		}
		sec := float64(flops) / q.DeviceRate
		if sec > maxSeconds {
			return Result{}, fmt.Errorf("device-rate=%g: the %s's step of %.3g FLOP would take %.3g s", q.DeviceRate, q.Model, float64(flops), sec)
		}
		r.Raw = time.Duration(math.Round(sec * 1e9))
		r.How = fmt.Sprintf("the %s's step at batch %d, %.3g FLOP, at %.3g FLOP/s", q.Model, q.Batch, float64(flops), q.DeviceRate)
	} else {
		st, err := nn.NewStep(q.Model, q.Shape, q.Batch)
		if err != nil {
			return Result{}, err
		}
		if r.Raw, err = Measure(func() { st.Run() }, now); err != nil {
			return Result{}, err
		}
		r.How = fmt.Sprintf("measured: the %s's step at batch %d on this machine", q.Model, q.Batch)
	}
	if r.Base = Round2(r.Raw); r.Base <= 0 {
		return Result{}, fmt.Errorf("base: auto: the %s's step came to %s (%s); give base a duration", q.Model, r.Raw, r.How)
	}
	return r, nil
}
