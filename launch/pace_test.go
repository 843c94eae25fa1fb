package launch

import (
	"context"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// TestInprocEmulatedSpeeds (issue 12, item 1): the live workers stretch
// their real iterations to the job's timing model. Under ASP, where
// nobody waits for anyone, a worker of speed 3 pushes about a third as
// often as the two of speed 1; under BSP everybody pushes alike and the
// round takes the slow worker's time. 40 ms iterations dwarf this
// machine's real MLP step (about a millisecond; ten under the race
// detector), so the ratio is mostly the model's, not the machine's.
func TestInprocEmulatedSpeeds(t *testing.T) {
	ds := synth(t)
	for _, spec := range []string{"asp", "bsp"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cfg := quickJob(t, spec, 3, 1)
		cfg.Epochs = 1.5
		cfg.Timing = timing.WorkerSpec{Base: 40 * time.Millisecond, Speeds: []float64{1, 1, 3}}
		start := time.Now()
		r, err := Train(ctx, cfg, Options{Data: ds}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)
		wp := r.WorkerPushes
		t.Logf("%s: worker pushes %v in %.2f s (throughput %.1f/s)", spec, wp, wall.Seconds(), r.Throughput)
		fast := float64(wp[0]+wp[1]) / 2
		switch spec {
		case "asp":
			// Expected 1/3; a loaded machine adds the same real overhead to
			// every iteration, which pulls the ratio towards 1 (0.44 under
			// the race detector here, 20 ms added to every iteration);
			// without the pace it would be about 1.
			if ratio := float64(wp[2]) / fast; ratio < 0.2 || ratio > 0.6 {
				t.Errorf("asp: the speed-3 worker pushed %.2f of a speed-1 worker's count, want about 1/3", ratio)
			}
		case "bsp":
			if d := wp[2] - wp[0]; d < -1 || d > 1 {
				t.Errorf("bsp: worker pushes %v, want equal", wp)
			}
			// Every round waits for the slow worker's 120 ms.
			if rounds := float64(wp[0]); r.Seconds < rounds*0.12*0.9 {
				t.Errorf("bsp: %v rounds in %.2f s: faster than the slow worker's 120 ms a round", rounds, r.Seconds)
			}
		}
	}
}
