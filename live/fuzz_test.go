package live

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// FuzzShardFrames drives a live in-process shard (shard 1 of a 2-shard
// job, or a 1-shard job's shard 0 with the coordinator; started fresh or
// with --restore) with a sequence of authenticated frames decoded from the
// input, on a worker's data connection, an observer's and the coordinator
// link's, and a worker's control connection, with extreme values in every
// field. After each sequence the shard's version, weights and memory must
// stay within what the accepted frames allow:
//   - a fresh shard never skips: version = updates; a restored one skips at
//     most the in-flight bound B beyond what it proves;
//   - weights finite, each moved by at most lr·K per update (gradients are
//     drawn from ±1, 0.5, 0 and non-finite values that must be refused);
//   - the heap grown by at most 16 MB while the frames were served (each
//     connection's buffers are 256 KiB), the staleness histogram,
//     membership and connection tables within the job's bounds.
//
// scripts/fuzz-budgets runs it by count.
func FuzzShardFrames(f *testing.F) {
	// Each op: a flags selector byte (7: flags follow), the op, its fields.
	f.Add([]byte{0, 0, 2, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0})                            // the report's 2^63 heartbeat
	f.Add([]byte{4, 0, 10, 0, 0, 10, 1, 0, 11, 0, 2, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0}) // restored: pushes, then 2^63
	f.Add([]byte{8, 0, 8, 1, 1, 0, 0, 0, 10, 0, 0, 12, 5, 0, 3, 1})                    // coordinator: a clock report, a join, a stop
	f.Add([]byte{2, 0, 4, 3, 0, 5, 1, 0, 0, 1, 7, 3, 0, 0, 7, 0, 5, 20, 1, 6, 0, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		runFuzzShard(t, data)
	})
}

// fuzzIn decodes a fuzz input; an exhausted input reads zeros.
type fuzzIn struct {
	b    []byte
	vals []uint64
}

func (in *fuzzIn) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	c := in.b[0]
	in.b = in.b[1:]
	return c
}

// u64 is an interesting value (around the shard's version, the bound B,
// the block length, the integer limits) or, with the top bit, 8 raw bytes.
func (in *fuzzIn) u64() uint64 {
	c := in.byte()
	if c&0x80 != 0 {
		var b [8]byte
		for i := range b {
			b[i] = in.byte()
		}
		if c&0x40 != 0 {
			return binary.LittleEndian.Uint64(b[:])
		}
		return 1 << 63 // a byte short of a raw value: the report's number
	}
	return in.vals[int(c)%len(in.vals)]
}

func (in *fuzzIn) i32() int32 {
	c := in.byte()
	switch c % 8 {
	case 0, 1, 2:
		return int32(c % 8) // ids of the job
	case 3:
		return -1
	case 4:
		return math.MinInt32
	case 5:
		return math.MaxInt32
	}
	return int32(in.u64())
}

func runFuzzShard(t *testing.T, data []byte) {
	const n = 64 // floats in the job; a shard holds 32 or 64
	mode := data[0]
	spec := []string{"asp", "bsp", "ssp:s=2", "softsync:n=2"}[mode&3]
	restore := mode&4 != 0
	withCoord := mode&8 != 0
	shards, idx := 2, 1
	if withCoord {
		shards, idx = 1, 0
	}
	cfg := quickJob(t, spec, 3, shards)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("f")
	if err != nil {
		t.Fatal(err)
	}
	params := &job.Description{Version: job.Version, Job: cfg, TrainN: 320}
	w0 := make([]float32, n)
	for i := range w0 {
		w0[i] = float32(i%7) - 3
	}
	addrs := []string{"f", "none"}[:shards]
	if !withCoord {
		addrs = []string{"none", "f"}
	}
	sc := ShardConfig{Index: idx, Params: params, Init: w0, Restarted: restore}
	sv, err := newServer(ServerConfig{Index: idx, Params: params, Listener: ln, Transport: tr, Token: "secret",
		ControlToken: "control-secret", ShardAddrs: addrs, Restore: restore}, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sv.Run(ctx) }()
	var conns []*wire.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	dial := func(h wire.Hello) (*wire.Conn, error) {
		cc := wire.ClientConfig{Hello: h}
		cc.Token = "secret"
		c, err := wire.Dial(ctx, tr, "f", cc)
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	must := func(c *wire.Conn, err error) *wire.Conn {
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sh := sv.Shard()
	bn := sh.hi - sh.lo
	worker := must(dial(wire.Hello{Role: proto.RoleWorker, Worker: 0}))
	obs := must(dial(proto.ControlHello(proto.RoleObserver, "control-secret", nil)))
	coord := must(dial(proto.ControlHello(proto.RoleCoordinator, "control-secret", nil)))
	var ctl *wire.Conn
	if withCoord {
		ctl = must(dial(wire.Hello{Role: proto.RoleControl, Worker: 1}))
	}
	h0 := heap() // the shard serving its connections, before any frame
	B := inFlight(params)
	idCap := idCap(params)
	in := &fuzzIn{b: data[1:]}
	grads := [][]float32{make([]float32, bn+1), make([]float32, bn+1), make([]float32, bn+1), make([]float32, bn+1), make([]float32, bn+1), make([]float32, bn+1)}
	for i := 0; i <= bn; i++ {
		grads[1][i], grads[2][i], grads[3][i] = 1, -1, float32(i%2)/2
		grads[4][i], grads[5][i] = 1, 1
	}
	grads[4][bn/2] = float32(math.NaN())
	grads[5][bn-1] = float32(math.Inf(-1))
	bodies := []string{`{"op":"stats"}`, `{"op":"stop"}`, `{"op":"members","live":[0,1,2]}`, `{"op":`, `{"op":"stats","live":[0]}`, "", `{"op":"members","live":[0,1],"removed":[2]}`}
	send := func(c *wire.Conn, fr *wire.Frame) {
		if c != nil {
			c.Send(ctx, fr) // errors: the connection was replaced or refused; the checks below still hold
		}
	}
	for op := 0; op < 64 && len(in.b) > 0; op++ {
		v := sh.Stats().Version
		in.vals = []uint64{0, 1, 2, v, v + 1, v + 2, B - 1, B, B + 1, B + 2, v + B, v + B + 1, v + B + 2, uint64(bn), uint64(bn - 1),
			uint64(bn + 1), uint64(idCap), uint64(idCap - 1), 1 << 31, 1 << 32, 1<<63 + 128, math.MaxUint64, math.MaxUint64 - 1, math.MaxInt32}
		var fr wire.Frame
		if in.byte()&7 == 7 {
			fr.Flags = in.byte() & wire.FlagsApp
		}
		k := in.byte()
		switch k % 13 {
		case 0: // push
			fr.Type, fr.Shard, fr.Worker = wire.MsgPush, uint32(in.u64()), in.i32()
			fr.Tag, fr.Extra = in.u64(), in.u64()
			if in.byte()&3 == 0 {
				fr.Offset = in.u64()
			}
			g := grads[int(in.byte())%len(grads)]
			fr.Floats = g[:[]int{bn, bn - 1, 0, bn + 1}[in.byte()%4]]
			send(worker, &fr)
		case 1: // pull
			fr.Type, fr.Shard, fr.Worker = wire.MsgPull, uint32(in.u64()), in.i32()
			fr.Offset, fr.Count, fr.Tag, fr.Extra = in.u64(), uint32(in.u64()), in.u64(), in.u64()
			send(worker, &fr)
		case 2: // heartbeat on the data connection
			fr.Type, fr.Shard, fr.Worker, fr.Tag = wire.MsgHeartbeat, uint32(idx), 0, in.u64()
			if in.byte()&1 == 1 {
				fr.Shard, fr.Worker, fr.Extra, fr.Offset = uint32(in.u64()), in.i32(), in.u64(), in.u64()
			}
			send(worker, &fr)
		case 3: // observer control
			b := bodies[int(in.byte())%len(bodies)]
			fr.Type, fr.Bytes = wire.MsgControl, []byte(b)
			send(obs, &fr)
		case 4: // coordinator view with fuzzed ids
			var view proto.Control
			view.Op = "members"
			for j := int(in.byte() % 6); j > 0; j-- {
				if in.byte()&1 == 0 {
					view.Live = append(view.Live, int(in.i32()))
				} else {
					view.Removed = append(view.Removed, int(in.i32()))
				}
			}
			b, _ := json.Marshal(view)
			fr.Type, fr.Bytes = wire.MsgControl, b
			send(coord, &fr)
		case 5: // any other type on the data connection
			fr.Type = wire.MsgType(in.byte()%14 + 2)
			fr.Shard, fr.Worker, fr.Tag, fr.Extra = uint32(in.u64()), in.i32(), in.u64(), in.u64()
			if fr.Type.CarriesFloats() {
				fr.Floats = grads[1][:bn]
			} else if fr.Type != wire.MsgPull {
				fr.Bytes = []byte(bodies[int(in.byte())%len(bodies)])
			}
			send(worker, &fr)
		case 6: // observer pull
			fr.Type, fr.Shard, fr.Worker = wire.MsgPull, uint32(idx), -1
			fr.Offset, fr.Count, fr.Tag, fr.Extra = in.u64(), uint32(in.u64()), in.u64(), in.u64()
			send(obs, &fr)
		case 7: // observer acknowledgement
			fr.Type, fr.Shard, fr.Worker, fr.Tag = wire.MsgHeartbeat, uint32(idx), -1, in.u64()
			send(obs, &fr)
		case 8: // clock report
			fr.Type, fr.Worker, fr.Tag, fr.Extra, fr.Offset = wire.MsgClock, in.i32(), in.u64(), in.u64(), in.u64()
			send(ctl, &fr)
		case 9: // control heartbeat
			fr.Type, fr.Worker, fr.Tag = wire.MsgHeartbeat, in.i32(), in.u64()
			send(ctl, &fr)
		case 10: // a good push at the version held
			fr.Type, fr.Shard, fr.Worker, fr.Tag, fr.Extra, fr.Floats = wire.MsgPush, uint32(idx), 0, v, v, grads[1+int(in.byte())%3][:bn]
			send(worker, &fr)
		case 11: // a good pull and its acknowledgement
			fr.Type, fr.Shard, fr.Worker, fr.Tag = wire.MsgPull, uint32(idx), 0, v
			send(worker, &fr)
			send(worker, &wire.Frame{Type: wire.MsgHeartbeat, Shard: uint32(idx), Worker: 0, Tag: v})
		case 12: // a new data connection: an id of the job replaces the old one
			if c, err := dial(wire.Hello{Role: proto.RoleWorker, Worker: in.i32()}); err == nil {
				worker = c
			}
		}
	}
	// Every connection's frames are served in order: one call each, answered,
	// means everything sent before it was served.
	var resp wire.Frame
	syncs := []struct {
		c *wire.Conn
		f wire.Frame
	}{{worker, wire.Frame{Type: wire.MsgPull, Shard: 999}}, {obs, wire.Frame{Type: wire.MsgControl, Bytes: []byte(`{"op":"stats"}`)}},
		{coord, wire.Frame{Type: wire.MsgPush}}, {ctl, wire.Frame{Type: wire.MsgPush}}}
	for _, s := range syncs {
		if s.c == nil {
			continue
		}
		c, cancelCall := context.WithTimeout(ctx, 30*time.Second)
		err := s.c.Call(c, &s.f, &resp)
		late := c.Err() != nil
		cancelCall()
		if late {
			t.Fatalf("a connection did not answer within 30 s: %v", err)
		}
	}

	st := sh.Stats()
	if !restore && (st.Skipped != 0 || st.Version != uint64(st.Updates)) {
		t.Fatalf("fresh shard: version %d, updates %d, skipped %d; want version = updates, no skip", st.Version, st.Updates, st.Skipped)
	}
	if restore && (st.Skipped > B || st.Version > uint64(st.Updates)+B) {
		t.Fatalf("restored shard: version %d, updates %d, skipped %d; want skipped ≤ B = %d", st.Version, st.Updates, st.Skipped, B)
	}
	w, _ := sh.Weights()
	lim := float64(st.Updates)*cfg.LR*float64(cfg.Workers) + 1e-3
	for i, x := range w {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || math.Abs(float64(x)-float64(w0[sh.lo+i])) > lim {
			t.Fatalf("weight %d = %g (w⁰ %g) after %d updates: beyond ±%g", i, x, w0[sh.lo+i], st.Updates, lim)
		}
	}
	if len(st.Staleness) > maxStaleness+1 {
		t.Fatalf("staleness histogram of %d buckets", len(st.Staleness))
	}
	sh.mu.Lock()
	nm := len(sh.members)
	sh.mu.Unlock()
	sv.connMu.Lock()
	nc := len(sv.conns)
	sv.connMu.Unlock()
	// One connection per role and id (worker, control, the coordinator link).
	if nm > idCap || nc > 2*idCap+1 {
		t.Fatalf("shard tables: %d members, %d connections; the job admits %d ids", nm, nc, idCap)
	}
	if co := sv.Coordinator(); co != nil {
		co.mu.Lock()
		nm := len(co.members)
		co.mu.Unlock()
		if nm > idCap {
			t.Fatalf("coordinator: %d members, the job admits %d ids", nm, idCap)
		}
	}
	if h := heap(); h > h0+16<<20 {
		t.Fatalf("the frames grew the heap from %d to %d MB", h0>>20, h>>20)
	}
}
