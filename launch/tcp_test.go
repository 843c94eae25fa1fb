package launch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
)

// fmnistJob is a small Fashion-MNIST job the worker processes load
// themselves (tcp mode).
func fmnistJob(t testing.TB, spec string, k, s int, train int, epochs float64) job.Config {
	sp, err := paradigm.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return job.Config{Spec: sp, Workers: k, Shards: s, Model: "mlp", Dataset: "fashion-mnist", TrainLimit: train,
		TestLimit: 1000, Epochs: epochs, Batch: 32, LR: 0.05, Momentum: -1, HeartbeatTimeout: time.Second, EvalEvery: 1}
}

func tcpOpts(t testing.TB) Options {
	// The timeout is a guard against a hang, far beyond the seconds a job
	// takes on an idle machine, so that a busy one only makes it slower.
	o := Options{Mode: "tcp", Binary: pacerBin, Timeout: 3 * time.Minute}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	return o
}

// skipUnderRace skips a whole-job test under the race detector
// (DECISIONS: slow end-to-end tests need not run twice under it; they run
// in the plain go test). A tcp job's servers and workers are separate
// processes built without the detector, so only this launcher would be
// instrumented; an in-process job that tests what training computes (an
// optimizer, a clip, an average) runs the same concurrent code as
// TestInprocEveryParadigm, which stays under the detector with every
// paradigm, as does TestTCPEveryParadigm/bsp for the tcp cluster.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a whole job: run by the plain go test (see skipUnderRace)")
	}
}

func TestTCPEveryParadigm(t *testing.T) {
	specs := []string{"bsp", "asp", "ssp:s=2", "dssp:sl=1,su=4", "elastic:r=4", "elastic:r=4,apply=local", "backup:b=1", "psp:c=3,b=0.5,t1=5ms,t2=5ms", "softsync:n=2", "delay:d=2"}
	if raceEnabled {
		specs = specs[:1] // see skipUnderRace
	}
	for _, spec := range specs {
		t.Run(spec, func(t *testing.T) {
			res, err := TrainResult(context.Background(), fmnistJob(t, spec, 4, 2, 1200, 1), tcpOpts(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Run
			// A worker removed on a busy machine for missed heartbeats
			// and admitted again is the protocol at work, not a fault.
			t.Logf("removed %d joined %d", res.Coord.Removed, res.Coord.Joined)
			t.Logf("%s: acc %.3f pushes %d updates %d dropped %d seconds %.2f wait %.2f", spec, r.FinalAccuracy, r.Pushes, r.Updates, r.Dropped, r.Seconds, r.WaitFraction)
			if r.Pushes < 1200/32 || r.Updates == 0 || r.Mode != "tcp" {
				t.Errorf("pushes %d updates %d mode %s", r.Pushes, r.Updates, r.Mode)
			}
		})
	}
}
