package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/steptime"
)

// stepClock is the clock base: auto times a step with: the monotonic
// clock from the call on. Tests drive their own.
var stepClock = func() func() time.Duration {
	t0 := time.Now()
	return func() time.Duration { return time.Since(t0) }
}

// resolveBase is base: auto for model on dataset's samples at batch: the
// step timed here (or from deviceRate FLOP/s), rounded to two significant
// digits, with the line saying so on stderr.
func resolveBase(model, dataset string, batch int, deviceRate float64, stderr io.Writer) (time.Duration, error) {
	im, err := data.ImageOf(dataset)
	if err != nil {
		return 0, err
	}
	r, err := steptime.Resolve(steptime.Request{Model: model, Shape: job.ImageShape(im), Batch: batch, DeviceRate: deviceRate}, stepClock())
	if err != nil {
		return 0, fmt.Errorf("base: auto: %w", err)
	}
	if r.Base > job.MaxBase {
		return 0, fmt.Errorf("base: auto: %s is above the largest base, %s (docs/paradigms.md, Limits)", r.Base, job.MaxBase)
	}
	fmt.Fprintln(stderr, r)
	return r.Base, nil
}

// refuseDeviceRate refuses --device-rate without base: auto, which alone
// reads it.
func refuseDeviceRate(given map[string]bool, auto bool) error {
	if given["device-rate"] && !auto {
		return fmt.Errorf("--device-rate is the FLOP/s base: auto turns into a step time: give --base auto (or a scenario's base: auto)")
	}
	return nil
}

// errLiveAuto refuses --base auto (and --device-rate) in the live modes.
var errLiveAuto = fmt.Errorf("--base auto and --device-rate apply to virtual time and sim; the live modes' workers run at their own real step time (leave --base unset)")
