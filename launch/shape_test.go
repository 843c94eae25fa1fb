package launch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/runstats"
)

// Issue 20, item 4: launch.Train refuses data of another shape than the
// model's before it starts a process, in both live modes (a tcp worker's
// own error would reach the supervisor only as its exit status).
func TestTrainRefusesDataOfAnotherShape(t *testing.T) {
	ds, err := data.NewSynthetic(data.SyntheticConfig{Train: 200, Test: 10, Dim: 3 * 32 * 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []runstats.Mode{runstats.Inproc, runstats.TCP} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := Train(ctx, quickJob(t, "bsp", 2, 1), Options{Mode: mode, Data: ds}, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "model mlp takes 784 inputs") || !strings.Contains(err.Error(), "3072 features") {
			t.Errorf("%s: %v (run %v); want the model and the data named", mode, err, r != nil)
		}
	}
}
