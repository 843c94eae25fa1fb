package live

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
)

// Issue 20, item 4: a live worker checks its data's shape against the model,
// as virtual time does, before its first step. Before, 10×10 images (100
// features) panicked the worker inside the MLP ("6400 inputs … want
// 50176") and 28×40 images (1,120 features) trained silently on misaligned
// inputs with exit 0.
func TestWorkerRefusesDataOfAnotherShape(t *testing.T) {
	_, tr := testServer(t, "")
	for _, c := range []struct{ dim, classes int }{{10 * 10, 10}, {28 * 40, 10}, {3 * 32 * 32, 10}, {784, 12}} {
		ds, err := data.NewSynthetic(data.SyntheticConfig{Train: 200, Test: 10, Dim: c.dim, Classes: c.classes, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := RunWorker(ctx, WorkerConfig{Coordinator: "s0", Transport: tr, Token: "secret", ID: -1, Data: ds, ConnectTimeout: 5 * time.Second})
		cancel()
		if err == nil {
			t.Errorf("%d features, %d classes: the worker ran (%d pushes)", c.dim, c.classes, res.Pushes)
			continue
		}
		for _, want := range []string{"model mlp takes 784 inputs", "synthetic/train has " + strconv.Itoa(c.dim) + " features"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d features: %v lacks %q", c.dim, err, want)
			}
		}
	}
}
