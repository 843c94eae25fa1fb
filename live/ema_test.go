package live

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// The shard's moving average follows θ̄ ← D·θ̄ + (1−D)·θ after every
// apply, from θ̄ = w⁰: checked against the recurrence computed by hand in
// float64 on a block of 4 under ASP and plain SGD (θ ← θ − η·g).
func TestShardEMAMatchesHand(t *testing.T) {
	cfg := quickJob(t, "asp", 1, 1)
	cfg.EMA, cfg.LR = 0.75, 0.5
	s, w0, theta, avg := emaShard(t, cfg)
	grads := [][]float32{{1, 0, -1, 2}, {0.5, 0.5, 0.5, 0.5}, {-3, 1, 0, 0.25}}
	for k, g := range grads {
		var resp wire.Frame
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: 0, Tag: uint64(k), Extra: uint64(k), Floats: append([]float32(nil), g...)}, &resp); err != nil {
			t.Fatal(err)
		}
		for i := range theta {
			theta[i] -= 0.5 * float64(g[i])
			avg[i] = 0.75*avg[i] + 0.25*theta[i]
		}
	}
	got, v, ok := s.Average()
	w, _ := s.Weights()
	if !ok || v != 3 {
		t.Fatalf("average kept %v at version %d, want 3", ok, v)
	}
	for i := range avg {
		if math.Abs(float64(got[i])-avg[i]) > 1e-6 || math.Abs(float64(w[i])-theta[i]) > 1e-6 {
			t.Errorf("element %d: average %v weight %v; by hand %v and %v", i, got[i], w[i], avg[i], theta[i])
		}
	}
	// Without --ema the shard keeps none.
	cfg.EMA = 0
	plain, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: w0})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := plain.Average(); ok || plain.ema != nil {
		t.Error("a job without --ema keeps a moving average")
	}
}

// The average is checkpointed with the weights and restored from them; a
// checkpoint written without one (an older file, or a job run without
// --ema) restores it at the checkpoint's weights.
func TestShardEMACheckpointed(t *testing.T) {
	dir := t.TempDir()
	cfg := quickJob(t, "asp", 2, 1)
	cfg.EMA = 0.9
	s := logShardOf(t, dir, cfg, false)
	runSteps(t, s, dir, []logStep{logPush(0), logPush(1), logPush(0), checkpointStep}, map[int]uint64{}, rand.New(rand.NewPCG(3, 4)))
	s.closeLog()
	avg, v, _ := s.Average()
	w, _ := s.Weights()
	want := ckpt.Want{Shard: 0, Shards: 1, Lo: 0, Hi: logBlock, NumParams: logBlock, Model: cfg.Model}
	st, err := ckpt.Read(ckpt.Path(dir, 0), want)
	if err != nil {
		t.Fatal(err)
	}
	if WeightsCRC(st.EMA) != WeightsCRC(avg) || WeightsCRC(avg) == WeightsCRC(w) {
		t.Fatalf("checkpoint's average CRC %08x, the shard's %08x (weights %08x)", WeightsCRC(st.EMA), WeightsCRC(avg), WeightsCRC(w))
	}
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	d := &job.Description{Version: job.Version, Job: cfg, TrainN: 100}
	r, err := newShard(ShardConfig{Index: 0, Params: d, Restore: st})
	if err != nil {
		t.Fatal(err)
	}
	if got, gv, _ := r.Average(); gv != v || WeightsCRC(got) != WeightsCRC(avg) {
		t.Errorf("restored average at version %d CRC %08x, want %d and %08x", gv, WeightsCRC(got), v, WeightsCRC(avg))
	}
	st.EMA = nil // as a checkpoint written before the average existed
	old, err := newShard(ShardConfig{Index: 0, Params: d, Restore: st})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, ok := old.Average(); !ok || WeightsCRC(got) != WeightsCRC(w) {
		t.Errorf("restored from a file without an average: kept %v, CRC %08x; want the weights' %08x", ok, WeightsCRC(got), WeightsCRC(w))
	}
}

// Under --durability log a shard killed without a final checkpoint
// replays its log through the same apply, so its average comes back bit
// for bit as the shard that never died has it.
func TestShardEMAReplayed(t *testing.T) {
	dirRef, dir := t.TempDir(), t.TempDir()
	cfg := quickJob(t, "bsp", 2, 1)
	cfg.EMA = 0.99
	script := []logStep{logPush(0), logPush(1), checkpointStep, logPush(0), logPush(1), logPush(1), logPush(0)}
	rs := logShardOf(t, dirRef, cfg, false)
	defer rs.closeLog()
	s := logShardOf(t, dir, cfg, false)
	runSteps(t, rs, dirRef, script, map[int]uint64{}, rand.New(rand.NewPCG(5, 6)))
	runSteps(t, s, dir, script, map[int]uint64{}, rand.New(rand.NewPCG(5, 6)))
	r := logShardOf(t, dir, cfg, true) // s abandoned: kill -9
	defer r.closeLog()
	got, v, _ := r.Average()
	want, vRef, _ := rs.Average()
	if v != vRef || v != 3 || WeightsCRC(got) != WeightsCRC(want) {
		t.Fatalf("replayed average at version %d CRC %08x; the shard that never died %d, %08x", v, WeightsCRC(got), vRef, WeightsCRC(want))
	}
}

// A worker's data connection may ask its shard for the block of θ̄ (the
// workers of a model pacer does not know evaluate it; they hold no control
// token): the answer is the shard's average at its version, as an
// observer gets it, and differs from θ after an update. Every other
// control op stays refused on a worker's connection, and a job without
// --ema refuses the ask with the shard's reason; refusals change nothing.
func TestWorkerAsksAverage(t *testing.T) {
	sv, tr := ctrlShard(t, "asp", 1, 1, 0, false, func(sc *ServerConfig) { sc.Params.Job.EMA = 0.5 })
	sh := sv.Shard()
	w := dialWorker(t, tr, 0)
	obs := dialRole(t, tr, proto.RoleObserver)
	ask := func(c *wire.Conn, body string) (wire.Frame, error) {
		var resp wire.Frame
		err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgControl, Bytes: []byte(body)}, &resp)
		return resp, err
	}
	w0, _ := sh.Weights()
	g := make([]float32, len(w0))
	for i := range g {
		g[i] = float32(i%7) - 3
	}
	var ack wire.Frame
	if err := w.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Worker: 0, Floats: g}, &ack); err != nil {
		t.Fatal(err)
	}
	resp, err := ask(w, `{"op":"average"}`)
	if err != nil {
		t.Fatal(err)
	}
	avg, v, _ := sh.Average()
	theta, _ := sh.Weights()
	if resp.Type != wire.MsgPullResp || resp.Tag != v || v != 1 || resp.Worker != 0 || !slices.Equal(resp.Floats, avg) {
		t.Fatalf("worker's average: %s tag %d worker %d, %d floats; the shard's at version %d", resp.Type, resp.Tag, resp.Worker, len(resp.Floats), v)
	}
	if slices.Equal(avg, theta) || slices.Equal(avg, w0) {
		t.Error("after one update θ̄ equals θ or w⁰: the answer is not the average")
	}
	if o, err := ask(obs, `{"op":"average"}`); err != nil || !slices.Equal(o.Floats, resp.Floats) {
		t.Errorf("the observer's average (%v) differs from the worker's", err)
	}
	refused := sh.Stats().Refused
	for _, body := range []string{`{"op":"stats"}`, `{"op":"stop"}`, `{"op":"members","live":[0]}`, `{"op":"average","removed":[0]}`, `{"op":`, ``} {
		if _, err := ask(w, body); wire.CodeOf(err) != wire.CodeBadRequest {
			t.Errorf("worker control %s: %v, want bad_request", body, err)
		}
	}
	if st := sh.Stats(); st.Refused != refused+6 || st.Pushes != 1 {
		t.Errorf("refused %d (want %d), pushes %d (want 1)", st.Refused, refused+6, st.Pushes)
	}
	if got, gv, _ := sh.Average(); gv != v || !slices.Equal(got, avg) {
		t.Error("refused asks changed the average")
	}

	plain, ptr := ctrlShard(t, "asp", 1, 1, 0, false, nil)
	_, err = ask(dialWorker(t, ptr, 0), `{"op":"average"}`)
	var re *wire.RemoteError
	if !errors.As(err, &re) || re.Code != wire.CodeBadRequest || !strings.Contains(re.Message, "without --ema") {
		t.Errorf("average of a job without --ema: %v, want bad_request naming --ema", err)
	}
	if plain.Shard().Stats().Refused != 1 {
		t.Error("the refusal was not counted")
	}
}

// Under --ema-time the shard's average fades in its own time: each apply
// weighs 1−exp(−dt/τ) by the time dt since the previous one. The test
// drives the shard's clock, an hour on before each push, τ = 1 h: D = e⁻¹
// each time, checked against the recurrence by hand.
func TestShardEMATimeFadesInTime(t *testing.T) {
	cfg := quickJob(t, "asp", 1, 1)
	cfg.EMATime, cfg.LR = time.Hour, 0.5
	s, _, theta, avg := emaShard(t, cfg)
	var now time.Duration
	s.clock = func() time.Duration { return now }
	d := math.Exp(-1)
	for k, g := range [][]float32{{1, 0, -1, 2}, {0.5, 0.5, 0.5, 0.5}, {-3, 1, 0, 0.25}} {
		now += time.Hour
		var resp wire.Frame
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: 0, Tag: uint64(k), Extra: uint64(k), Floats: append([]float32(nil), g...)}, &resp); err != nil {
			t.Fatal(err)
		}
		for i := range theta {
			theta[i] -= 0.5 * float64(g[i])
			avg[i] = d*avg[i] + (1-d)*theta[i]
		}
	}
	got, _, ok := s.Average()
	if !ok {
		t.Fatal("no average kept under --ema-time")
	}
	for i := range avg {
		if math.Abs(float64(got[i])-avg[i]) > 1e-5 {
			t.Errorf("element %d: average %v, by hand %v", i, got[i], avg[i])
		}
	}
}

// emaShard is a one-shard job of cfg (filled here) on the block w0 =
// {1, −2, 0.5, 3}, with the weights θ and the average θ̄ a test computes
// by hand beside it, both from w0.
func emaShard(t *testing.T, cfg job.Config) (s *Shard, w0 []float32, theta, avg []float64) {
	t.Helper()
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	w0 = []float32{1, -2, 0.5, 3}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1 << 20}, Init: w0})
	if err != nil {
		t.Fatal(err)
	}
	theta, avg = make([]float64, 4), make([]float64, 4)
	for i, v := range w0 {
		theta[i], avg[i] = float64(v), float64(v)
	}
	return s, w0, theta, avg
}
