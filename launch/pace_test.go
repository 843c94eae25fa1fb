package launch

import (
	"context"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// TestInprocEmulatedSpeeds (issue 12, item 1): the live workers stretch
// their real iterations to the job's timing model: every iteration of a
// speed-s worker lasts at least s × --base (a timer never fires early, so
// this holds at any load; on an idle machine the 40 ms dwarf the real MLP
// step and ASP's slow worker pushes about a third as often, on a busy one
// the real compute stretches every iteration alike, so no ratio is
// asserted). Under BSP everybody pushes alike. The pace's draws are
// traced in live's TestPaceStretches.
func TestInprocEmulatedSpeeds(t *testing.T) {
	ds := synth(t)
	const base = 40 * time.Millisecond
	speeds := []float64{1, 1, 3}
	for _, spec := range []string{"asp", "bsp"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard against a hang
		cfg := quickJob(t, spec, 3, 1)
		cfg.Epochs = 0.5
		cfg.Timing = timing.WorkerSpec{Base: base, Speeds: speeds}
		r, err := Train(ctx, cfg, Options{Data: ds}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		wp := r.WorkerPushes
		t.Logf("%s: worker pushes %v, iterations %+v", spec, wp, r.WorkerIterations)
		if len(r.WorkerIterations) != len(speeds) {
			t.Fatalf("%s: iteration times of %d workers, want %d", spec, len(r.WorkerIterations), len(speeds))
		}
		for i, it := range r.WorkerIterations {
			if want := speeds[i] * base.Seconds(); it.N == 0 || it.Mean < want {
				t.Errorf("%s: worker %d (speed %g): %d iterations of %.1f ms on average, want at least %.0f ms", spec, i, speeds[i], it.N, it.Mean*1e3, want*1e3)
			}
		}
		if d := wp[2] - wp[0]; spec == "bsp" && (d < -1 || d > 1) {
			t.Errorf("bsp: worker pushes %v, want equal", wp)
		}
	}
}
