package live

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/wire"
)

// TestFlatJobShards: the shards of a flat model's job start from the
// --init vector, each its block; a shard given other weights than the
// job's digest is refused; the final checkpoints put together are the
// vector, exported as a flat file; a restore starts from the checkpoints.
func TestFlatJobShards(t *testing.T) {
	w := make([]float32, 1001)
	for i := range w {
		w[i] = float32(i%17) - 8
	}
	c := quickJob(t, "bsp", 1, 2)
	c.Model, c.InitSHA256 = nn.FlatName(len(w)), nn.FlatDigest(w)
	d, err := job.Describe(c, 256)
	if err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ckptDir := t.TempDir()
	cfg := func(i int, init []float32) ServerConfig {
		return ServerConfig{Index: i, Params: &d, Transport: tr, Token: "secret", ControlToken: "control-secret",
			ShardAddrs: []string{"s0", "s1"}, CheckpointDir: ckptDir, Init: init}
	}
	for _, tc := range []struct {
		init []float32
		want string
	}{
		{nil, "needs its initial weights"},
		{w[:1000], "initial weights of 1000 parameters; model flat:n=1001 has 1001"},
		{append(slices.Clone(w[:1000]), 7), "give every shard of the job the same --init file"},
	} {
		if _, err := NewServer(cfg(1, tc.init)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("init of %d values: %v, want an error containing %q", len(tc.init), err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan error
	for i, name := range []string{"s0", "s1"} {
		ln, err := tr.Listen(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := cfg(i, w)
		sc.Listener = ln
		sv, err := NewServer(sc)
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() { ch <- sv.Run(ctx) }()
		done = append(done, ch)
	}
	stop := func() {
		cancel()
		for _, ch := range done {
			if err := <-ch; err != nil {
				t.Error(err)
			}
		}
		done = nil
	}
	defer func() {
		if done != nil {
			stop()
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for i, r := range job.Ranges(len(w), 2) {
		o := proto.NewObserver(tr, []string{"s0", "s1"}[i], i, "secret", "control-secret")
		got := make([]float32, r[1]-r[0])
		err := o.Weights(wctx, got)
		o.Close()
		if err != nil || !slices.Equal(got, w[r[0]:r[1]]) {
			t.Fatalf("shard %d's weights: %v (first %v, want %v)", i, err, got[:3], w[r[0]:r[0]+3])
		}
	}
	stop() // each shard checkpoints as it stops
	m, err := modelfile.FromCheckpoints(ckptDir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model.npz")
	if err := modelfile.WriteNPZ(out, m); err != nil {
		t.Fatal(err)
	}
	got, err := modelfile.ReadFlat(out, len(w))
	if err != nil || !slices.Equal(got, w) || m.Name() != c.Model {
		t.Fatalf("the export: %s, %v", m.Name(), err)
	}

	// Restarted with --restore, the shards start from their checkpoints
	// (here rewritten with other weights at version 5), not from --init.
	w2 := make([]float32, len(w))
	for i := range w2 {
		w2[i] = float32(i) / 100
	}
	for i, r := range job.Ranges(len(w), 2) {
		st := &ckpt.State{Meta: ckpt.Meta{Shard: i, Shards: 2, Lo: r[0], Hi: r[1], NumParams: len(w), Version: 5, Paradigm: "bsp", Model: c.Model},
			Weights: w2[r[0]:r[1]]}
		if _, err := ckpt.Write(ckptDir, st); err != nil {
			t.Fatal(err)
		}
	}
	tr2 := &wire.Inproc{}
	for i, name := range []string{"s0", "s1"} {
		ln, err := tr2.Listen(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := cfg(i, w)
		sc.Listener, sc.Transport, sc.Restore = ln, tr2, true
		runServer(t, sc)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	for i, r := range job.Ranges(len(w), 2) {
		o := proto.NewObserver(tr2, []string{"s0", "s1"}[i], i, "secret", "control-secret")
		got := make([]float32, r[1]-r[0])
		err := o.Weights(rctx, got)
		o.Close()
		if err != nil || !slices.Equal(got, w2[r[0]:r[1]]) {
			t.Fatalf("restored shard %d's weights: %v (first %v, want %v)", i, err, got[:3], w2[r[0]:r[0]+3])
		}
	}
}
