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
	o := Options{Mode: "tcp", Binary: pacerBin, Timeout: 90 * time.Second}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	return o
}

func TestTCPEveryParadigm(t *testing.T) {
	for _, spec := range []string{"bsp", "asp", "ssp:s=2", "dssp:sl=1,su=4", "elastic:r=4", "elastic:r=4,apply=local", "backup:b=1", "psp:c=3,b=0.5,t1=5ms,t2=5ms", "softsync:n=2"} {
		t.Run(spec, func(t *testing.T) {
			res, err := TrainResult(context.Background(), fmnistJob(t, spec, 4, 2, 1200, 1), tcpOpts(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Run
			if res.Coord.Removed != 0 {
				t.Errorf("%d workers removed in a run without faults", res.Coord.Removed)
			}
			t.Logf("%s: acc %.3f pushes %d updates %d dropped %d seconds %.2f wait %.2f", spec, r.FinalAccuracy, r.Pushes, r.Updates, r.Dropped, r.Seconds, r.WaitFraction)
			if r.Pushes < 1200/32 || r.Updates == 0 || r.Mode != "tcp" {
				t.Errorf("pushes %d updates %d mode %s", r.Pushes, r.Updates, r.Mode)
			}
		})
	}
}
