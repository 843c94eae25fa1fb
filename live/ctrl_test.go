package live

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: issue 14's checks on every number a peer sends, and issue 20's
// roles (finding 8).

// ctrlShard runs shard idx of a k-worker, s-shard job of spec over an
// in-process transport at address "sh", with the job token "secret" and
// the control token "control-secret".
func ctrlShard(t *testing.T, spec string, k, s, idx int, restore bool, edit func(*ServerConfig)) (*Server, *wire.Inproc) {
	t.Helper()
	cfg := quickJob(t, spec, k, s)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("sh")
	if err != nil {
		t.Fatal(err)
	}
	addrs := make([]string, s)
	for i := range addrs {
		addrs[i] = "none"
	}
	addrs[idx] = "sh"
	sc := ServerConfig{Index: idx, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 320}, Listener: ln, Transport: tr,
		Token: "secret", ControlToken: "control-secret", ShardAddrs: addrs, Restore: restore}
	if edit != nil {
		edit(&sc)
	}
	return runServer(t, sc), tr
}

func dialWorker(t *testing.T, tr wire.Transport, id int32) *wire.Conn {
	t.Helper()
	c, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleWorker, Worker: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func dialRole(t *testing.T, tr wire.Transport, role string) *wire.Conn {
	t.Helper()
	c, err := dialHello(tr, "sh", "secret", proto.ControlHello(role, "control-secret", nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// waitRefused waits until the shard has refused n frames.
func waitRefused(t *testing.T, sh *Shard, n int64) {
	t.Helper()
	waitUntil(func() bool { return sh.Stats().Refused >= n })
	if got := sh.Stats().Refused; got != n {
		t.Fatalf("refused %d frames, want %d", got, n)
	}
}

// TestIssue14Attack replays the report: against shard 1 of an ASP job
// (2 shards, 3 workers) a client with the job token says hello as worker 7
// and is refused; as worker 0 it sends one Heartbeat holding version 2^63,
// which is refused, counted and logged with its address, and leaves the
// shard's version, weights and memory as they were. Then the shard still
// serves the real worker 0.
func TestIssue14Attack(t *testing.T) {
	var buf syncBuffer
	sv, tr := ctrlShard(t, "asp", 3, 2, 1, false, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
	sh := sv.Shard()
	w0, v0 := sh.Weights()
	h0 := heap()

	_, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleWorker, Worker: 7})
	if err == nil {
		t.Fatal("hello as worker 7 (the job has 0–2) was accepted")
	}
	if !strings.Contains(err.Error(), "not been admitted") {
		t.Errorf("hello as worker 7: %v, want a refusal saying it was not admitted", err)
	}
	c := dialWorker(t, tr, 0)
	hb := wire.Frame{Type: wire.MsgHeartbeat, Shard: 1, Worker: 0, Tag: 1 << 63}
	if err := c.Send(context.Background(), &hb); err != nil {
		t.Fatal(err)
	}
	waitRefused(t, sh, 2)
	w1, v1 := sh.Weights()
	if v1 != v0 || !slices.Equal(w0, w1) {
		t.Fatalf("the refused heartbeat changed the shard: version %d → %d", v0, v1)
	}
	// The same frame as a request gets its error code back.
	var resp wire.Frame
	if err := c.Call(context.Background(), &hb, &resp); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("the 2^63 heartbeat as a request: %v, want bad_request", err)
	}
	// A push naming a version read far ahead, then good pushes.
	g := make([]float32, len(w0))
	g[0] = 1
	bad := wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: 0, Extra: 1<<63 + 128, Floats: g}
	if err := c.Call(context.Background(), &bad, &resp); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("push read at 2^63+128: %v, want bad_request", err)
	}
	for i := 0; i < 3; i++ {
		if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: 0, Extra: uint64(i), Floats: g}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	if st := sh.Stats(); st.Version != v0+3 || st.Skipped != 0 || len(st.Staleness) > 1 {
		t.Errorf("after three good pushes: version %d skipped %d staleness buckets %d; want %d, 0, ≤ 1", st.Version, st.Skipped, len(st.Staleness), v0+3)
	}
	if grown := int64(heap()) - int64(h0); grown > 32<<20 {
		t.Errorf("heap grew by %d MB", grown>>20)
	}
	log := buf.String()
	if !strings.Contains(log, "refused hello") || !strings.Contains(log, "refused request") || !strings.Contains(log, "peer=") {
		t.Errorf("refusals not logged with the peer:\n%s", log)
	}
	// The refused Hello is logged with the id it asked for (it has none yet).
	if !regexp.MustCompile(`msg="refused hello".* worker=7 `).MatchString(log) {
		t.Errorf("the refused hello is not logged with the id it asked for (7):\n%s", log)
	}
	if strings.Contains(log, "skipped forward") {
		t.Error("the shard logged a version skip")
	}
}

// TestRestoredShardSkipBounded: a shard started with --restore (no
// checkpoint here: from w⁰) skips forward to a version a worker holds, but
// only up to what it can prove plus the job's in-flight bound B; it cannot
// be ratcheted past that by skips.
func TestRestoredShardSkipBounded(t *testing.T) {
	sv, tr := ctrlShard(t, "asp", 3, 2, 1, true, nil)
	sh := sv.Shard()
	B := inFlight(sv.cfg.Params)
	c := dialWorker(t, tr, 0)
	var resp wire.Frame
	call := func(tag uint64) error {
		return c.Call(context.Background(), &wire.Frame{Type: wire.MsgHeartbeat, Shard: 1, Worker: 0, Tag: tag}, &resp)
	}
	for _, tag := range []uint64{B + 1, 1 << 63, math.MaxUint64} {
		if err := call(tag); wire.CodeOf(err) != wire.CodeBadRequest {
			t.Errorf("held %d (B = %d): %v, want bad_request", tag, B, err)
		}
	}
	if st := sh.Stats(); st.Version != 0 {
		t.Fatalf("version %d after refused announcements", st.Version)
	}
	// B itself is plausible: a heartbeat is one-way, so follow it with a
	// pull to know it was served.
	if err := c.Send(context.Background(), &wire.Frame{Type: wire.MsgHeartbeat, Shard: 1, Worker: 0, Tag: B}); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPull, Shard: 1, Worker: 0}, &resp); err != nil {
		t.Fatal(err)
	}
	if st := sh.Stats(); st.Version != B || st.Skipped != B {
		t.Fatalf("version %d skipped %d, want %d (the announced version)", st.Version, st.Skipped, B)
	}
	if err := call(B + 1); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("a second skip past the bound: %v, want bad_request", err)
	}
	// The shard's own updates are provable: one push raises version and
	// bound alike, so the skip allowance stays used up.
	g := make([]float32, sh.hi-sh.lo)
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: 0, Extra: B, Floats: g}, &resp); err != nil {
		t.Fatal(err)
	}
	if err := call(B + 2); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("held %d after one own update at %d: %v, want bad_request", B+2, B+1, err)
	}
	if st := sh.Stats(); st.Version != B+1 || st.Skipped != B {
		t.Errorf("version %d skipped %d, want %d and %d", st.Version, st.Skipped, B+1, B)
	}
}

// refusalCase is one frame with extreme values and the code it must get.
type refusalCase struct {
	name  string
	conn  string // "worker", "observer", "coordinator" (on the shard) or "control" (on shard 0)
	frame wire.Frame
	code  wire.ErrorCode
}

// TestExtremeFieldsRefused sends frames with extreme values in every
// header field of every frame type a server receives, on every role's
// connection: each is refused with its code and counted, and the shard's
// version, weights and memory do not change.
func TestExtremeFieldsRefused(t *testing.T) {
	sv, tr := ctrlShard(t, "bsp", 3, 2, 1, false, nil)
	sh := sv.Shard()
	n := sh.hi - sh.lo
	g := make([]float32, n)
	w0, v0 := sh.Weights()
	h0 := heap()
	conns := map[string]*wire.Conn{"worker": dialWorker(t, tr, 0), "observer": dialRole(t, tr, proto.RoleObserver),
		"coordinator": dialRole(t, tr, proto.RoleCoordinator)}
	const (
		bad   = wire.CodeBadRequest
		proto = wire.CodeProtocol
	)
	// Over the job's control bound, under the frame limit of a control
	// connection (64 KiB here): the handler refuses it and the connection
	// stays open. A frame over the limit is refused from its header and
	// closes the connection (TestFrameLimitsPerRole).
	big := []byte(`{"op":"stats","live":[` + strings.Repeat("1,", 16000) + `1]}`)
	var cases []refusalCase
	add := func(conn, name string, f wire.Frame, code wire.ErrorCode) {
		cases = append(cases, refusalCase{name, conn, f, code})
	}
	for _, x := range []struct {
		name string
		f    wire.Frame
	}{
		{"shard max", wire.Frame{Shard: math.MaxUint32}},
		{"worker max", wire.Frame{Shard: 1, Worker: math.MaxInt32}},
		{"worker -2", wire.Frame{Shard: 1, Worker: -2}},
		{"other worker", wire.Frame{Shard: 1, Worker: 2}},
		{"tag max", wire.Frame{Shard: 1, Tag: math.MaxUint64}},
		{"tag 2^63", wire.Frame{Shard: 1, Tag: 1 << 63}},
		{"extra max", wire.Frame{Shard: 1, Extra: math.MaxUint64}},
		{"extra 2^63", wire.Frame{Shard: 1, Extra: 1 << 63}},
		{"offset max", wire.Frame{Shard: 1, Offset: math.MaxUint64}},
		{"flags", wire.Frame{Shard: 1, Flags: 0xf}},
	} {
		code := bad
		if x.name == "flags" {
			code = proto
		}
		push := x.f
		push.Type, push.Floats = wire.MsgPush, g
		pull := x.f
		pull.Type = wire.MsgPull
		hb := x.f
		hb.Type = wire.MsgHeartbeat
		add("worker", "push "+x.name, push, code)
		switch x.name {
		case "tag max", "tag 2^63": // a pull's held version
			add("worker", "pull "+x.name, pull, code)
			add("worker", "heartbeat "+x.name, hb, code)
		case "extra max", "extra 2^63": // a pull's minimum version; unused by a heartbeat
			add("worker", "pull "+x.name, pull, code)
			add("observer", "pull "+x.name, func() wire.Frame { f := pull; f.Worker = -1; return f }(), code)
		case "offset max": // unused by a heartbeat
			add("worker", "pull "+x.name, pull, code)
			add("observer", "pull "+x.name, func() wire.Frame { f := pull; f.Worker = -1; return f }(), code)
		default:
			add("worker", "pull "+x.name, pull, code)
			add("worker", "heartbeat "+x.name, hb, code)
		}
	}
	add("worker", "pull count max", wire.Frame{Type: wire.MsgPull, Shard: 1, Count: math.MaxUint32}, bad)
	add("worker", "pull count+offset", wire.Frame{Type: wire.MsgPull, Shard: 1, Offset: uint64(n), Count: 1}, bad)
	add("worker", "pull worker -1", wire.Frame{Type: wire.MsgPull, Shard: 1, Worker: -1}, bad)
	add("worker", "push short", wire.Frame{Type: wire.MsgPush, Shard: 1, Floats: g[:n-1]}, bad)
	add("worker", "push NaN", wire.Frame{Type: wire.MsgPush, Shard: 1, Floats: append(g[:n-1:n-1], float32(math.NaN()))}, wire.CodeNonFinite)
	// A small one: an observer's frames are bounded by the job's largest
	// control frame, so a whole block is refused from its header and
	// closes the connection (TestFrameLimitsPerRole).
	add("observer", "observer push", wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: -1, Floats: g[:16]}, bad)
	add("observer", "observer pull as worker 0", wire.Frame{Type: wire.MsgPull, Shard: 1, Worker: 0}, bad)
	for _, ty := range []wire.MsgType{wire.MsgHelloOK, wire.MsgPushAck, wire.MsgClock, wire.MsgRelease, wire.MsgJoin,
		wire.MsgLeave, wire.MsgError, wire.MsgShutdown} {
		f := wire.Frame{Type: ty, Shard: 1, Worker: 0, Tag: math.MaxUint64, Extra: math.MaxUint64, Offset: math.MaxUint64, Bytes: []byte("x")}
		add("worker", "worker "+ty.String(), f, proto)
	}
	// A worker may ask for the average only (TestWorkerAsksAverage); this
	// job keeps none.
	for _, body := range []string{``, `{"op":"stats"}`, `{"op":"average"}`} {
		add("worker", "worker control "+body, wire.Frame{Type: wire.MsgControl, Shard: 1, Worker: 0, Tag: math.MaxUint64, Bytes: []byte(body)}, bad)
	}
	add("worker", "worker pull_resp", wire.Frame{Type: wire.MsgPullResp, Shard: 1, Worker: 0, Floats: g}, proto)
	for _, c := range []struct {
		name string
		body string
		code wire.ErrorCode
	}{
		{"stop on shard 1", `{"op":"stop"}`, bad},
		{"members as observer", `{"op":"members","live":[0,1,2]}`, bad},
		{"unknown op", `{"op":"` + strings.Repeat("x", 100) + `"}`, bad},
		{"not JSON", `{"op":`, bad},
		{"view on stats", `{"op":"stats","removed":[0]}`, bad},
		{"average without --ema", `{"op":"average"}`, bad},
	} {
		add("observer", "observer "+c.name, wire.Frame{Type: wire.MsgControl, Bytes: []byte(c.body)}, c.code)
	}
	add("observer", "observer control of 32 KB", wire.Frame{Type: wire.MsgControl, Bytes: big}, bad)
	add("observer", "observer clock", wire.Frame{Type: wire.MsgClock, Tag: math.MaxUint64}, proto)
	for _, c := range []struct{ name, body string }{
		{"id max", `{"op":"members","live":[0,1,2147483647]}`},
		{"id -1", `{"op":"members","live":[0,1,2],"removed":[-1]}`},
		{"id twice", `{"op":"members","live":[0,1,2],"removed":[2]}`},
		{"id past the job's bound", `{"op":"members","live":[0,1,2,1000]}`},
		{"stop", `{"op":"stop"}`},
		{"not JSON", `[[[[`},
	} {
		add("coordinator", "members "+c.name, wire.Frame{Type: wire.MsgControl, Bytes: []byte(c.body)}, bad)
	}
	add("coordinator", "coordinator members of 32 KB", wire.Frame{Type: wire.MsgControl, Bytes: big}, bad)
	add("coordinator", "coordinator push", wire.Frame{Type: wire.MsgPush, Shard: 1, Floats: g[:16]}, proto)
	add("coordinator", "coordinator heartbeat", wire.Frame{Type: wire.MsgHeartbeat, Shard: 1, Tag: math.MaxUint64}, proto)

	for i, tc := range cases {
		var resp wire.Frame
		f := tc.frame
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := conns[tc.conn].Call(ctx, &f, &resp)
		cancel()
		var re *wire.RemoteError
		if !errors.As(err, &re) || re.Code != tc.code {
			t.Errorf("%s on a %s connection: %v, want a remote %s error", tc.name, tc.conn, err, tc.code)
		}
		if got := sh.Stats().Refused; got != int64(i+1) {
			t.Fatalf("%s: refused counter %d, want %d", tc.name, got, i+1)
		}
	}
	w1, v1 := sh.Weights()
	if v1 != v0 || !slices.Equal(w0, w1) {
		t.Errorf("refused frames changed the shard: version %d → %d", v0, v1)
	}
	if st := sh.Stats(); st.Pushes != 0 || st.Skipped != 0 {
		t.Errorf("pushes %d skipped %d after refusals only", st.Pushes, st.Skipped)
	}
	if grown := int64(heap()) - int64(h0); grown > 32<<20 {
		t.Errorf("heap grew by %d MB", grown>>20)
	}
	t.Logf("%d frames refused", len(cases))
}

// TestCoordinatorChecksClaims: on shard 0, hellos for ids the job never
// admitted and clock reports with implausible counts or times are refused
// and counted; nothing is counted as a push.
func TestCoordinatorChecksClaims(t *testing.T) {
	sv, tr := ctrlShard(t, "bsp", 3, 1, 0, false, nil)
	co := sv.Coordinator()
	for _, id := range []int32{3, 7, 1000, math.MaxInt32, -2, math.MinInt32} {
		_, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleControl, Worker: id})
		if wire.CodeOf(err) != wire.CodeBadRequest {
			t.Errorf("control hello as worker %d: %v, want bad_request", id, err)
		}
	}
	c, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleControl, Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var resp wire.Frame
	for _, tc := range []struct {
		name string
		f    wire.Frame
		code wire.ErrorCode
	}{
		{"seq max", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: math.MaxUint64}, wire.CodeBadRequest},
		{"seq 2", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 2}, wire.CodeBadRequest},
		{"seq 0", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 0}, wire.CodeBadRequest},
		{"wait max", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Extra: math.MaxUint64}, wire.CodeBadRequest},
		{"busy max", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Offset: math.MaxUint64}, wire.CodeBadRequest},
		{"wait+busy wrap", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Extra: 1 << 63, Offset: 1 << 63}, wire.CodeBadRequest},
		{"other worker", wire.Frame{Type: wire.MsgClock, Worker: 2, Tag: 1}, wire.CodeBadRequest},
		{"loss NaN", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Bytes: lossPayload(math.NaN())}, wire.CodeBadRequest},
		{"loss +Inf", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Bytes: lossPayload(math.Inf(1))}, wire.CodeBadRequest},
		{"loss negative", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Bytes: lossPayload(-1)}, wire.CodeBadRequest},
		{"loss 4 bytes", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Bytes: []byte{0, 0, 0x80, 0x3f}}, wire.CodeBadRequest},
		{"heartbeat other worker", wire.Frame{Type: wire.MsgHeartbeat, Worker: math.MaxInt32}, wire.CodeBadRequest},
		{"flags", wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Flags: 0xf}, wire.CodeProtocol},
		{"push", wire.Frame{Type: wire.MsgPush, Worker: 1, Floats: []float32{1}}, wire.CodeProtocol},
		{"control", wire.Frame{Type: wire.MsgControl, Bytes: []byte(`{"op":"stop"}`)}, wire.CodeProtocol},
	} {
		f := tc.f
		if err := c.Call(context.Background(), &f, &resp); wire.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if st := co.Stats(); st.Pushes != 0 || st.Refused < 12 || st.BatchLosses != 0 {
		t.Errorf("pushes %d refused %d losses %d, want 0, ≥ 12 and 0", st.Pushes, st.Refused, st.BatchLosses)
	}
	// The next report in sequence is counted, with its loss.
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgClock, Worker: 1, Tag: 1, Extra: 10, Offset: 10, Bytes: lossPayload(2.5)}, &resp); err != nil {
		t.Fatal(err)
	}
	if st := co.Stats(); st.Pushes != 1 || st.BatchLosses != 1 || st.BatchLossSum != 2.5 {
		t.Errorf("pushes %d, losses %d summing to %g after a good report, want 1, 1 and 2.5", st.Pushes, st.BatchLosses, st.BatchLossSum)
	}
}

// TestJoinsBounded: --id −1 joins take new ids up to the job's bound, and
// the shard admits a joined id once the coordinator's view says so.
func TestJoinsBounded(t *testing.T) {
	sv, tr := ctrlShard(t, "asp", 1, 1, 0, false, nil)
	idCap := idCap(sv.cfg.Params)
	var conns []*wire.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < idCap; i++ {
		c, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleControl, Worker: -1})
		if err != nil {
			t.Fatalf("join %d of %d: %v", i+1, idCap, err)
		}
		conns = append(conns, c)
	}
	if _, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleControl, Worker: -1}); wire.CodeOf(err) != wire.CodeUnavailable {
		t.Errorf("join past the bound of %d ids: %v, want unavailable", idCap, err)
	}
	// The last joined id reaches the shard with the view (shard 0's link
	// delivers it directly, but asynchronously).
	last := int32(idCap - 1)
	var err error
	waitUntil(func() bool {
		var c *wire.Conn
		if c, err = dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleWorker, Worker: last}); err == nil {
			c.Close()
		}
		return err == nil
	})
	if err != nil {
		t.Errorf("data connection of joined worker %d: %v", last, err)
	}
	if _, err := dialHello(tr, "sh", "secret", wire.Hello{Role: proto.RoleWorker, Worker: int32(idCap)}); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("data connection as worker %d (past the bound): %v, want bad_request", idCap, err)
	}
}

// TestNewerConnectionReplaces: a second data connection of a worker id
// replaces the first, which the shard closes; a second control connection
// replaces the first likewise.
func TestNewerConnectionReplaces(t *testing.T) {
	_, tr := ctrlShard(t, "asp", 2, 1, 0, false, nil)
	for _, role := range []string{proto.RoleWorker, proto.RoleControl} {
		a, err := dialHello(tr, "sh", "secret", wire.Hello{Role: role, Worker: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := dialHello(tr, "sh", "secret", wire.Hello{Role: role, Worker: 1})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-a.Done():
		case <-time.After(waitGuard): // a guard: the newer hello closes it
			t.Errorf("%s: the older connection of worker 1 is still open", role)
		}
		select {
		case <-b.Done():
			t.Errorf("%s: the newer connection was closed", role)
		default:
		}
		a.Close()
		b.Close()
	}
}

// TestControlRolesNeedControlToken (issue 20, finding 8): the job token
// alone does not make a coordinator or an observer; with the control token
// a stop and a removal are logged with who asked.
func TestControlRolesNeedControlToken(t *testing.T) {
	var buf syncBuffer
	sv, tr := ctrlShard(t, "asp", 3, 1, 0, false, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
	for _, role := range []string{proto.RoleCoordinator, proto.RoleObserver} {
		for _, h := range []wire.Hello{{Role: role, Worker: -1}, proto.ControlHello(role, "secret", nil), proto.ControlHello(role, "control-secreT", nil),
			{Role: role, Worker: -1, Meta: []byte(`"not an object"`)}} {
			if _, err := dialHello(tr, "sh", "secret", h); wire.CodeOf(err) != wire.CodeUnauthenticated {
				t.Errorf("%s with meta %s: %v, want unauthenticated", role, h.Meta, err)
			}
		}
	}
	if got := sv.ws.Stats().AuthFailures.Load(); got != 8 {
		t.Errorf("auth failures %d, want 8", got)
	}
	co := dialRole(t, tr, proto.RoleCoordinator)
	var req, resp wire.Frame
	req.SetJSON(wire.MsgControl, proto.Control{Op: proto.OpMembers, Live: []int{0, 1}, Removed: []int{2}})
	if err := co.Call(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	ob := dialRole(t, tr, proto.RoleObserver)
	req.SetJSON(wire.MsgControl, proto.Control{Op: proto.OpStop})
	if err := ob.Call(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if !sv.Coordinator().Stats().Done {
		t.Error("the observer's stop did not end the job")
	}
	log := buf.String()
	for _, want := range []string{`msg="workers removed from the shard"`, "by=coordinator@", `msg="job stopped on request"`, "by=observer@"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// TestServerNeedsControlToken: NewServer refuses a missing control token,
// or one equal to the job token.
func TestServerNeedsControlToken(t *testing.T) {
	cfg := quickJob(t, "asp", 1, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"", "secret"} {
		_, err := NewServer(ServerConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 10}, Token: "secret",
			ControlToken: ct, ShardAddrs: []string{"x"}})
		if err == nil || !strings.Contains(err.Error(), "control token") {
			t.Errorf("control token %q: %v, want an error naming the control token", ct, err)
		}
	}
}
