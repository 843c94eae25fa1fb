package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestCheckFinite: every position of a NaN or ±Inf, at every length around
// the unrolled step, is found; finite extremes pass.
func TestCheckFinite(t *testing.T) {
	bads := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001)}
	for n := 0; n < 40; n++ {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.MaxFloat32 * float32(1-2*(i%2)) // the largest finite values, both signs
		}
		if err := proto.CheckFinite(v); err != nil {
			t.Fatalf("n=%d: finite block refused: %v", n, err)
		}
		for i := 0; i < n; i++ {
			for _, b := range bads {
				old := v[i]
				v[i] = b
				if proto.CheckFinite(v) == nil {
					t.Fatalf("n=%d: %v at %d not found", n, b, i)
				}
				if proto.CheckFinite(v[1:]) == nil && i > 0 {
					t.Fatalf("n=%d: %v at %d not found in an unaligned view", n, b, i)
				}
				v[i] = old
			}
		}
	}
}

// TestPushScreenedAsItArrives: over the wire a pushed block is checked
// piece by piece as it arrives (Server.screenPush). A NaN in its last
// piece is refused, named by its index in the block, counted, and changes
// nothing; a push that is wrong in another way keeps that reason even if
// it also holds a NaN; a good push then applies.
func TestPushScreenedAsItArrives(t *testing.T) {
	n := 2*wire.PieceFloats + 3
	cfg := quickJob(t, "bsp", 1, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, n)}
	sv, err := newServer(ServerConfig{Index: 0, Params: sc.Params, Listener: ln, Transport: tr, Token: "secret", ControlToken: "c",
		ShardAddrs: []string{"s0"}}, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	c, err := dialAs(t, tr, "secret", proto.RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sh := sv.Shard()
	w0, v0 := sh.Weights()

	g := make([]float32, n)
	for i := range g {
		g[i] = 0.5
	}
	g[n-1] = float32(math.Inf(-1))
	var resp wire.Frame
	var re *wire.RemoteError
	err = c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Floats: g}, &resp)
	if !errors.As(err, &re) || re.Code != wire.CodeNonFinite || !strings.Contains(re.Message, fmt.Sprintf("at index %d", n-1)) {
		t.Fatalf("push with -Inf in its last piece: %v", err)
	}
	g[5] = float32(math.NaN())
	err = c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Shard: 7, Floats: g}, &resp)
	if !errors.As(err, &re) || re.Code != wire.CodeBadRequest || !strings.Contains(re.Message, "unknown shard 7") {
		t.Fatalf("push to an unknown shard, with a NaN: %v", err)
	}
	if st := sh.Stats(); st.NonFinite != 1 || st.Refused != 2 || st.Pushes != 0 {
		t.Errorf("non-finite %d (want 1), refused %d (want 2), accepted %d (want 0)", st.NonFinite, st.Refused, st.Pushes)
	}
	if w1, v1 := sh.Weights(); v1 != v0 || !slices.Equal(w0, w1) {
		t.Errorf("a refused push changed the weights or the version (%d → %d)", v0, v1)
	}
	g[5], g[n-1] = 0.5, 0.5
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Floats: g}, &resp); err != nil {
		t.Fatalf("a good push after the refusals: %v", err)
	}
	if st := sh.Stats(); st.Pushes != 1 {
		t.Errorf("accepted %d pushes, want 1", st.Pushes)
	}
}

// bigPush pushes a finite block of ±3e38 as worker w (its clock next).
func bigPush(s *Shard, w int, clocks map[int]uint64) error {
	g := make([]float32, logBlock)
	for i := range g {
		g[i] = 3e38
	}
	var resp wire.Frame
	req := wire.Frame{Type: wire.MsgPush, Worker: int32(w), Tag: clocks[w], Extra: s.Stats().Version, Floats: g}
	clocks[w]++
	return s.push(nil, &req, &resp)
}

func allFinite(v []float32) bool { return proto.CheckFinite(v) == nil }

// TestFinitePushesNeverMakeNaN is issue 37's point 3: finite pushes whose
// update overflows (3e38 with momentum) never make a weight NaN or ±Inf.
// Applied on arrival (ASP), the push that would is refused non_finite
// before its acknowledgement; applied as a mean of several (BSP, after
// the acknowledgements), the update is skipped. Both are counted; pulls
// see finite weights; the log's replay skips the same updates and comes
// back with the same weights bit for bit; a checkpoint is written and
// restores.
func TestFinitePushesNeverMakeNaN(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		workers int
	}{{"asp", 1}, {"bsp", 2}} {
		t.Run(tc.spec, func(t *testing.T) {
			dir := t.TempDir()
			s := logShard(t, dir, tc.spec, tc.workers, 0.9, false)
			clocks := map[int]uint64{}
			refused := 0
			for i := range 4 * tc.workers {
				err := bigPush(s, i%tc.workers, clocks)
				switch {
				case err == nil:
				case wire.CodeOf(err) == wire.CodeNonFinite && tc.spec == "asp":
					refused++
				default:
					t.Fatalf("push %d: %v", i, err)
				}
				var resp wire.Frame
				if err := s.pull(nil, &wire.Frame{Type: wire.MsgPull, Worker: 0}, &resp); err != nil || !allFinite(resp.Floats) {
					t.Fatalf("pull after push %d: %v, finite %v", i, err, allFinite(resp.Floats))
				}
			}
			st := s.Stats()
			if st.NonFiniteUpdates == 0 || (tc.spec == "asp" && refused != int(st.NonFiniteUpdates)) {
				t.Fatalf("%d updates skipped, %d pushes refused", st.NonFiniteUpdates, refused)
			}
			if v := s.opt.State().Velocity; !allFinite(v) {
				t.Fatal("the momentum buffer is not finite")
			}
			want, wantV := s.Weights()
			if err := s.checkpoint(dir, true); err != nil {
				t.Fatalf("checkpoint: %v", err)
			}
			bigPush(s, 0, clocks) // logged after the checkpoint, replayed from the log
			want, wantV = s.Weights()
			r := logShard(t, dir, tc.spec, tc.workers, 0.9, true)
			defer r.closeLog()
			if got, v := r.Weights(); v != wantV || !slices.Equal(got, want) {
				t.Fatalf("restored at version %d (weights equal: %v), the shard was at %d", v, slices.Equal(got, want), wantV)
			}
			if !sameState(r.opt.State(), s.opt.State()) {
				t.Error("the restored momentum differs")
			}
		})
	}
}

// TestCheckpointRefusesNonFinite: the last guard: a shard whose state is
// not finite writes no checkpoint (a restore would refuse it).
func TestCheckpointRefusesNonFinite(t *testing.T) {
	dir := t.TempDir()
	s := logShard(t, dir, "asp", 1, 0.9, false)
	defer s.closeLog()
	s.mu.Lock()
	s.cur.buf[7] = float32(math.Inf(1))
	s.mu.Unlock()
	if err := s.checkpoint(dir, true); err == nil || !strings.Contains(err.Error(), "index 7") {
		t.Fatalf("checkpoint of an infinite weight: %v", err)
	}
}

// TestNonFiniteApplyIntoCopy: when a pull is still sending the current
// block, the apply writes into a copy (copy on write); an update found
// non-finite drops the copy and the shard keeps the block the pull sends,
// with its optimizer state put back.
func TestNonFiniteApplyIntoCopy(t *testing.T) {
	s := logShard(t, t.TempDir(), "asp", 1, 0.9, false)
	defer s.closeLog()
	clocks := map[int]uint64{}
	if err := bigPush(s, 0, clocks); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	held := s.cur
	held.refs++ // a pull reply being written from it
	before, v := slices.Clone(held.buf), slices.Clone(s.opt.State().Velocity)
	s.mu.Unlock()
	if err := bigPush(s, 0, clocks); wire.CodeOf(err) != wire.CodeNonFinite {
		t.Fatalf("overflowing push: %v, want non_finite", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != held || !slices.Equal(held.buf, before) || !slices.Equal(s.opt.State().Velocity, v) || s.stats.CopyOnWrite != 1 {
		t.Fatalf("after the skipped apply into a copy: current is the held block %v, block intact %v, velocity intact %v, copies %d",
			s.cur == held, slices.Equal(held.buf, before), slices.Equal(s.opt.State().Velocity, v), s.stats.CopyOnWrite)
	}
	held.refs--
}

// TestLargePushScreenedOverTheWire: over the wire, a push holding a value
// of 2⁴⁰ or more (here 3e38, in its last piece) is flagged by the screen
// as it arrives, so its apply saves what it overwrites even after applies
// that needed no saving: at a rate of 10⁴ it overflows, and is refused
// non_finite with nothing changed (unflagged, it would take the fast path
// and panic).
func TestLargePushScreenedOverTheWire(t *testing.T) {
	n := 2*wire.PieceFloats + 3
	cfg := quickJob(t, "asp", 1, 1)
	cfg.Momentum, cfg.LR = 0.9, 1e4
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, n)}
	sv, err := newServer(ServerConfig{Index: 0, Params: sc.Params, Listener: ln, Transport: tr, Token: "secret", ControlToken: "c",
		ShardAddrs: []string{"s0"}}, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	c, err := dialAs(t, tr, "secret", proto.RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sh := sv.Shard()
	push := func(clock uint64, last float32) error {
		g := make([]float32, n)
		for i := range g {
			g[i] = 0.5
		}
		g[n-1] = last
		var resp wire.Frame
		_, v := sh.Weights()
		return c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Tag: clock, Extra: v, Floats: g}, &resp)
	}
	for clock := range uint64(3) { // the later ones take the fast path
		if err := push(clock, 0.5); err != nil {
			t.Fatal(err)
		}
	}
	sh.mu.Lock()
	small := sh.split.small
	sh.mu.Unlock()
	if !small {
		t.Fatal("after small pushes the shard does not know its weights are small")
	}
	w, v := sh.Weights()
	if err := push(3, 3e38); wire.CodeOf(err) != wire.CodeNonFinite {
		t.Fatalf("a push whose momentum overflows: %v, want non_finite", err)
	}
	if w2, v2 := sh.Weights(); !slices.Equal(w, w2) || v2 != v+1 || !allFinite(w2) {
		t.Fatalf("after the skipped update: weights equal %v, version %d → %d, finite %v", slices.Equal(w, w2), v, v2, allFinite(w2))
	}
}
