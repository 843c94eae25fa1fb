package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/ops"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
)

// restoreConfig is shard 1 of a 1-worker, 2-shard BSP job restoring from
// dir, and the range that shard holds.
func restoreConfig(t *testing.T, dir string) (ServerConfig, ckpt.Meta) {
	t.Helper()
	cfg := quickJob(t, "bsp", 1, 2)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	m, err := job.NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := m.NumParams()
	r := job.Ranges(n, 2)[1]
	sc := ServerConfig{Index: 1, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Token: "secret", ControlToken: "control-secret",
		CheckpointDir: dir, Restore: true}
	return sc, ckpt.Meta{Shard: 1, Shards: 2, Lo: r[0], Hi: r[1], NumParams: n, Version: 7, Paradigm: "bsp", Model: cfg.Model}
}

// rawCheckpoint writes shard 1's checkpoint file by hand: header m, the
// value bytes, then zeros up to sparse bytes of values (a hole, not
// written), and a valid CRC-32C over all of it.
func rawCheckpoint(t *testing.T, dir string, m ckpt.Meta, values []byte, sparse int64) string {
	t.Helper()
	hdr, _ := json.Marshal(m)
	var b bytes.Buffer
	b.WriteString("PACERCK1")
	binary.Write(&b, binary.LittleEndian, uint32(len(hdr)))
	b.Write(hdr)
	b.Write(values)
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	h.Write(b.Bytes())
	zeros := make([]byte, 1<<20)
	for left := sparse; left > 0; left -= int64(len(zeros)) {
		h.Write(zeros[:min(left, int64(len(zeros)))])
	}
	path := ckpt.Path(dir, m.Shard)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(b.Bytes())
	f.Seek(sparse, io.SeekCurrent)
	binary.Write(f, binary.LittleEndian, h.Sum32())
	return path
}

// TestRestoreWrappingRangeRefused (issue 20, finding 2): a file of a few
// hundred bytes whose declared range wraps 4·count around int64 passed
// the size check and crashed the server in makeslice.
func TestRestoreWrappingRangeRefused(t *testing.T) {
	dir := t.TempDir()
	sc, m := restoreConfig(t, dir)
	const k = 16
	m.Lo, m.Hi, m.NumParams = 0, 1<<62+k, 1<<62+k // 4·(2⁶²+k) ≡ 4k
	path := rawCheckpoint(t, dir, m, make([]byte, 4*k), 0)
	fi, _ := os.Stat(path)
	_, err := NewServer(sc)
	if !errors.Is(err, ckpt.ErrCorrupt) {
		t.Fatalf("%d-byte checkpoint with a wrapping range: err %v, want it refused as corrupt", fi.Size(), err)
	}
}

// TestRestoreOversizedRefused (issue 20, finding 2): a sparse file
// declaring 5 GB with a valid CRC drove the server past 3.5 GB before its
// range was compared with the shard's. One declaring 1 GiB is refused from
// its header: the refusal allocates a small fraction of it.
func TestRestoreOversizedRefused(t *testing.T) {
	dir := t.TempDir()
	sc, m := restoreConfig(t, dir)
	const n = 1 << 28 // 1 GiB of float32
	m.Lo, m.Hi, m.NumParams = 0, n, n
	rawCheckpoint(t, dir, m, nil, 4*n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NewServer(sc)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ckpt.ErrMismatch) || !strings.Contains(err.Error(), "268435456 parameters") {
		t.Errorf("checkpoint declaring 1 GiB: err %v, want ErrMismatch naming its size", err)
	}
	// The model's own w⁰ and buffers are a few MB; the file's 1 GiB must
	// not be allocated.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing the checkpoint allocated %d MB, want under 64 MB", got>>20)
	}
}

// TestRestoreNonFiniteAndVersionRefused (issue 20, finding 7): a checkpoint
// with a valid CRC holding a NaN restored (and every worker then exited
// "gradient diverged"); version 2⁶⁴−1 restored and wrapped to 0. A sound
// checkpoint still restores.
func TestRestoreNonFiniteAndVersionRefused(t *testing.T) {
	dir := t.TempDir()
	sc, m := restoreConfig(t, dir)
	good := &ckpt.State{Meta: m, Weights: make([]float32, m.Hi-m.Lo)}
	for i := range good.Weights {
		good.Weights[i] = float32(i%7) - 3
	}
	for _, c := range []struct {
		name string
		edit func(s *ckpt.State)
		want string
	}{
		{"nan", func(s *ckpt.State) { s.Weights[10] = float32(math.NaN()) }, "is NaN"},
		{"inf", func(s *ckpt.State) { s.Weights[0] = float32(math.Inf(-1)) }, "is -Inf"},
		{"version", func(s *ckpt.State) { s.Version = math.MaxUint64 }, "version 18446744073709551615"},
	} {
		s := *good
		s.Weights = append([]float32(nil), good.Weights...)
		c.edit(&s)
		if _, err := ckpt.Write(dir, &s); err != nil {
			t.Fatal(err)
		}
		sv, err := NewServer(sc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: server %v, err %v; want a refusal naming %q", c.name, sv != nil, err, c.want)
		}
	}
	// Written without momentum, restored into a job with it: the error
	// says both.
	if _, err := ckpt.Write(dir, good); err != nil {
		t.Fatal(err)
	}
	withMomentum := *sc.Params
	withMomentum.Job.Momentum = 0.9
	mc := sc
	mc.Params = &withMomentum
	if _, err := NewServer(mc); err == nil || !strings.Contains(err.Error(), "0 velocity values, the job's momentum is 0.9") {
		t.Errorf("checkpoint without velocity, job with momentum: err %v", err)
	}
	sv, err := NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	st := sv.Shard().Stats()
	w, v := sv.Shard().Weights()
	if !st.Restored || v != 7 || st.CheckpointVersion != 7 || w[3] != good.Weights[3] {
		t.Errorf("sound checkpoint: restored %v at version %d (checkpoint version %d), weight %v", st.Restored, v, st.CheckpointVersion, w[3])
	}
}

// TestRestoreOptimizerMismatchRefused: a checkpoint holds the state of
// the update rule that wrote it; restored into a job with another
// --optimizer it is refused, naming both, and the same rule restores it.
// An SGD checkpoint written before the rules existed has no optimizer
// field and is SGD's. Adam and AdamW, centered and uncentered RMSProp
// are other rules.
func TestRestoreOptimizerMismatchRefused(t *testing.T) {
	dir := t.TempDir()
	sc, m := restoreConfig(t, dir)
	n := m.Hi - m.Lo
	m.Optimizer, m.Step = "adam", 7
	adamState := &ckpt.State{Meta: m, Weights: make([]float32, n), Velocity: make([]float32, n), Square: make([]float32, n)}
	adamState.Square[2] = 0.25
	if _, err := ckpt.Write(dir, adamState); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(sc); err == nil || !strings.Contains(err.Error(), "optimizer adam, the job's --optimizer is sgd") {
		t.Errorf("adam checkpoint, sgd job: err %v", err)
	}
	adam := *sc.Params
	adam.Job.Optimizer = optim.Rule{Kind: optim.Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	ac := sc
	ac.Params = &adam
	sv, err := NewServer(ac)
	if err != nil {
		t.Fatalf("adam checkpoint, adam job: %v", err)
	}
	if st := sv.Shard().opt.State(); st.Step != 7 || st.Square[2] != 0.25 {
		t.Errorf("restored Adam state: step %d, square[2] %v", st.Step, st.Square[2])
	}

	sgd := &ckpt.State{Meta: m, Weights: make([]float32, n)}
	sgd.Optimizer, sgd.Step = "", 0
	if _, err := ckpt.Write(dir, sgd); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(ac); err == nil || !strings.Contains(err.Error(), "optimizer sgd, the job's --optimizer is adam") {
		t.Errorf("sgd checkpoint, adam job: err %v", err)
	}

	// AdamW keeps Adam's buffers but is another rule: each refuses the
	// other's file.
	if _, err := ckpt.Write(dir, adamState); err != nil {
		t.Fatal(err)
	}
	adamw := adam
	adamw.Job.Optimizer.Kind = optim.AdamW
	wc := sc
	wc.Params = &adamw
	if _, err := NewServer(wc); err == nil || !strings.Contains(err.Error(), "optimizer adam, the job's --optimizer is adamw") {
		t.Errorf("adam checkpoint, adamw job: err %v", err)
	}

	// Centered RMSProp is told from the uncentered rule by its mean
	// gradient, both ways; a centered job restores a centered file, mean
	// included.
	m.Optimizer, m.Step = "rmsprop", 0
	rms := &ckpt.State{Meta: m, Weights: make([]float32, n), Square: make([]float32, n), Mean: make([]float32, n)}
	rms.Mean[1] = -0.5
	if _, err := ckpt.Write(dir, rms); err != nil {
		t.Fatal(err)
	}
	plain := *sc.Params
	plain.Job.Optimizer = optim.Rule{Kind: optim.RMSProp, Alpha: 0.99, Eps: 1e-8}
	pc := sc
	pc.Params = &plain
	if _, err := NewServer(pc); err == nil || !strings.Contains(err.Error(), "optimizer rmsprop:centered=true, the job's --optimizer is rmsprop (") {
		t.Errorf("centered checkpoint, uncentered job: err %v", err)
	}
	centered := plain
	centered.Job.Optimizer.Centered = true
	cc := sc
	cc.Params = &centered
	sv, err = NewServer(cc)
	if err != nil {
		t.Fatalf("centered checkpoint, centered job: %v", err)
	}
	if st := sv.Shard().opt.State(); len(st.Mean) != n || st.Mean[1] != -0.5 {
		t.Errorf("restored centered state: mean %v", st.Mean)
	}
	rms.Mean = nil
	if _, err := ckpt.Write(dir, rms); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(cc); err == nil || !strings.Contains(err.Error(), "optimizer rmsprop, the job's --optimizer is rmsprop:centered=true") {
		t.Errorf("uncentered checkpoint, centered job: err %v", err)
	}
}

// TestStaleTempFilesRemoved (issue 20, finding 11): temporary files a kill
// left mid-write were never removed. The server removes its own shard's at
// start and leaves every other file alone.
func TestStaleTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	sc, _ := restoreConfig(t, dir)
	sc.Restore = false
	stale := filepath.Join(dir, ".shard-1-4242.tmp")
	other := filepath.Join(dir, ".shard-0-4242.tmp")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewServer(sc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale %s still there (%v)", stale, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("shard 0's %s removed by shard 1: %v", other, err)
	}
}

// scrape returns the metrics page at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metric reads one sample's value from a metrics page ("" if absent).
func metric(page, name string) string {
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimPrefix(l, name+" ")
		}
	}
	return ""
}

// waitMetrics waits for sv's metrics listener (Run opens it).
func waitMetrics(t *testing.T, sv *Server) string {
	t.Helper()
	if !waitUntil(func() bool { return sv.metricsAddr() != "" }) {
		t.Fatal("metrics server did not start")
	}
	return sv.metricsAddr()
}

// TestCheckpointFailureCounted (issue 20, finding 11): with a full disk,
// pacer_shard_checkpoints_total stayed at 1 while the version went on and
// nothing else said so. A checkpoint directory that cannot be written
// (a file stands in its place: every write fails, as on a full disk) is
// counted in pacer_shard_checkpoint_failures_total, the version last
// checkpointed is exported, and a later write that succeeds is counted.
func TestCheckpointFailureCounted(t *testing.T) {
	dir := t.TempDir()
	blocked := filepath.Join(dir, "ckpt")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sc, _ := restoreConfig(t, blocked)
	sc.Restore = false
	sc.MetricsAddr = "127.0.0.1:0"
	sc.CheckpointInterval = 20 * time.Millisecond
	sc.Listen = "127.0.0.1:0"
	var logBuf syncBuffer
	sc.Logger = newTestLogger(&logBuf)
	sv, err := NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	sv.Shard().mu.Lock()
	sv.Shard().dirty = true // as after an update
	sv.Shard().mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sv.Run(ctx) }()
	addr := waitMetrics(t, sv)
	var page string
	// The failure is counted before it is logged: wait for both (the
	// log line, read as soon as the counter moved, was missing once).
	waitUntil(func() bool {
		page = scrape(t, addr)
		v := metric(page, `pacer_shard_checkpoint_failures_total{shard="1"}`)
		return v != "" && v != "0" && strings.Contains(logBuf.String(), "checkpoint failed")
	})
	if v := metric(page, `pacer_shard_checkpoint_failures_total{shard="1"}`); v == "" || v == "0" {
		t.Fatalf("no checkpoint failure counted:\n%s", page)
	}
	if v := metric(page, `pacer_shard_checkpoints_total{shard="1"}`); v != "0" {
		t.Errorf("checkpoints_total %q after failed writes", v)
	}
	if v := metric(page, `pacer_shard_checkpoint_version{shard="1"}`); v != "0" {
		t.Errorf("checkpoint_version %q with no checkpoint written", v)
	}
	if l := logBuf.String(); !strings.Contains(l, "checkpoint failed") || !strings.Contains(l, "needs_bytes") || !strings.Contains(l, "kept_on_disk=none") {
		t.Errorf("no log line says the checkpoint failed and what it needs:\n%s", logBuf.String())
	}
	// The disk has room again: the next tick writes.
	os.Remove(blocked)
	waitUntil(func() bool { return sv.Shard().Stats().Checkpoints > 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := sv.Shard().Stats(); st.Checkpoints == 0 {
		t.Errorf("no checkpoint once the directory could be written: %+v", st)
	}
}

// TestMetricsIdleConnectionsClosed (issue 20, finding 10): keep-alive
// connections to the metrics server that sent one request and then went
// quiet were never closed (200 of 200 open after 60 s). With the idle
// timeout shortened, every one is closed by the server.
func TestMetricsIdleConnectionsClosed(t *testing.T) {
	saved := ops.Limits
	ops.Limits.IdleTimeout = 200 * time.Millisecond
	t.Cleanup(func() { ops.Limits = saved })
	sv, _ := testServer(t, "127.0.0.1:0")
	addr := waitMetrics(t, sv)
	const n = 20
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	open := 0
	deadline := time.Now().Add(waitGuard) // a guard: the server closes them after 200 ms idle
	for _, c := range conns {
		c.SetReadDeadline(deadline)
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			open++
		}
	}
	if open > 0 {
		t.Errorf("%d of %d idle keep-alive connections still open after %s (idle timeout %v)", open, n, waitGuard, ops.Limits.IdleTimeout)
	}
}

func newTestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestRestoreEmptyRangeCentered: a shard whose range is empty (a flat
// model of fewer parameters than shards: job.Ranges gives shard 0 of
// flat:n=1 on two shards [0, 0)) keeps no optimizer values, so its
// centered RMSProp checkpoint has no mean-gradient section; the restore
// still knows the file is centered RMSProp's (and an uncentered one
// not), as it does for a shard with values.
func TestRestoreEmptyRangeCentered(t *testing.T) {
	for _, centered := range []bool{true, false} {
		c := quickJob(t, "bsp", 1, 2)
		c.Model, c.Momentum = nn.FlatName(1), 0
		c.Optimizer = optim.Rule{Kind: optim.RMSProp, Alpha: 0.99, Eps: 1e-8, Centered: centered}
		if err := c.Fill(); err != nil {
			t.Fatal(err)
		}
		d := &job.Description{Version: job.Version, Job: c, TrainN: 100}
		if r := job.Ranges(1, 2)[0]; r[0] != r[1] {
			t.Fatalf("setup: shard 0's range %v is not empty", r)
		}
		s, err := newShard(ShardConfig{Index: 0, Params: d, Init: []float32{0.5}})
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := s.state(true)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := ckpt.Write(dir, st); err != nil {
			t.Fatal(err)
		}
		back, err := ckpt.Read(ckpt.Path(dir, 0), CheckpointWant(d, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newShard(ShardConfig{Index: 0, Params: d, Restore: back}); err != nil {
			t.Errorf("centered %v: restoring the empty shard's own checkpoint: %v", centered, err)
		}
		// The other rule's job refuses the file, naming both.
		other := *d
		other.Job.Optimizer.Centered = !centered
		if _, err := newShard(ShardConfig{Index: 0, Params: &other, Restore: back}); err == nil || !strings.Contains(err.Error(), "the job's --optimizer is "+other.Job.Optimizer.Kind.String()) {
			t.Errorf("centered %v: restored into a job centered %v: %v, want it refused", centered, !centered, err)
		}
	}
}
