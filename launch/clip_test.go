package launch

import (
	"context"
	"math"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/nn"
)

// --clip-norm on the live worker: each pushed gradient has at most that
// norm, so with plain SGD the weights move at most steps·lr·C from their
// start; unclipped, the same job moves them far more.
func TestClipNormLive(t *testing.T) {
	skipUnderRace(t)
	moved := func(clip float64) (float64, int64) {
		cfg := fmnistJob(t, "bsp", 1, 1, 320, 1)
		cfg.ClipNorm, cfg.Seed = clip, 4
		dir := t.TempDir()
		o := Options{Mode: "inproc", CheckpointDir: dir}
		res, err := TrainResult(context.Background(), cfg, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		j, err := ckpt.ReadJob(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := nn.New("mlp", nn.Image28)
		w0 := make([]float32, m.NumParams())
		m.Init(w0, cfg.Seed)
		var ss float64
		for i := range w0 {
			d := float64(j.Weights[i] - w0[i])
			ss += d * d
		}
		return math.Sqrt(ss), res.Run.Updates
	}
	const c, lr = 1e-4, 0.05
	clipped, steps := moved(c)
	free, _ := moved(0)
	t.Logf("weights moved %.3g clipped to %g (bound %.3g over %d steps), %.3g unclipped", clipped, c, float64(steps)*lr*c, steps, free)
	if steps == 0 || clipped > float64(steps)*lr*c*1.01 {
		t.Errorf("clipped to %g: the weights moved %.3g in %d steps of lr %g: more than the clip allows", c, clipped, steps, lr)
	}
	if free < 100*clipped {
		t.Errorf("unclipped the weights moved %.3g, clipped %.3g: the clip made no difference", free, clipped)
	}
}
