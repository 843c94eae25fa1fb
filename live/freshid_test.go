package live

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/wire"
)

// freezer is a transport whose connections stop, both ways, while it is
// frozen: a process stopped (SIGSTOP) as the coordinator sees it, silent
// and reading nothing, its connections still open.
type freezer struct {
	wire.Transport
	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
}

func newFreezer(tr wire.Transport) *freezer {
	f := &freezer{Transport: tr}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *freezer) set(frozen bool) {
	f.mu.Lock()
	f.frozen = frozen
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *freezer) wait() {
	f.mu.Lock()
	for f.frozen {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

func (f *freezer) Dial(ctx context.Context, addr string) (net.Conn, error) {
	f.wait()
	c, err := f.Transport.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return frozenConn{c, f}, nil
}

type frozenConn struct {
	net.Conn
	f *freezer
}

func (c frozenConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.f.wait()
	return n, err
}

func (c frozenConn) Write(b []byte) (int, error) {
	c.f.wait()
	return c.Conn.Write(b)
}

// Issue 37 point 5, as DECISIONS has it: recycled join ids are keyed by
// incarnation. A joined worker (id 1 of an ASP job of K = 1, the only one
// that pushes) is stopped until the coordinator removes it; every id of
// the job's 2K+64 is then in use by other processes (idle control
// connections that beat), and the next join is given its id. Let go, the
// stopped worker is given a fresh id once one is free (it was refused
// with "start it again with --id −1" and exited), redials its shard links
// under it, and finishes the job. The ids stay within the cap that
// bounds what a shard accepts (live/bounds.go).
func TestRecycledJoinGetsFreshID(t *testing.T) {
	cfg := quickJob(t, "asp", 1, 2)
	cfg.TrainLimit, cfg.TestLimit = 1600, 10 // 100 pushes
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := job.Data(cfg)
	if err != nil {
		t.Fatal(err)
	}
	desc := &job.Description{Version: job.Version, Job: cfg, TrainN: ds.Train.N}
	tr := &wire.Inproc{}
	addrs := []string{"s0", "s1"}
	var sv [2]*Server
	for i, a := range addrs {
		ln, err := tr.Listen(a)
		if err != nil {
			t.Fatal(err)
		}
		sv[i] = runServer(t, ServerConfig{Index: i, Params: desc, Listener: ln, Transport: tr, Token: "secret",
			ControlToken: "control-secret", ShardAddrs: addrs})
	}
	coord := sv[0].coord
	watch := watchGate(coord)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-watch.changed:
			case <-time.After(50 * time.Millisecond): // a membership change the gate does not see (a Hello refused)
			case <-ctx.Done():
				t.Fatalf("waiting for %s: coordinator %+v", what, coord.Stats())
			}
		}
	}

	// The idle processes: control connections under ids 0 and 2.., each
	// beating every 100 ms (the timeout is 1 s) until the test lets it go.
	type idle struct {
		c    *wire.Conn
		id   int32
		stop chan struct{}
	}
	var idles []*idle
	var beats sync.WaitGroup
	defer func() {
		for _, p := range idles {
			select {
			case <-p.stop:
			default:
				close(p.stop)
			}
		}
		beats.Wait()
	}()
	dialIdle := func(want int32, inc uint64) *idle {
		t.Helper()
		meta, err := json.Marshal(proto.HelloMeta{WorkerState: proto.WorkerState{Inc: inc}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := wire.Dial(ctx, tr, "s0", wire.ClientConfig{Config: wire.Config{Token: "secret"}, Hello: wire.Hello{Role: proto.RoleControl, Worker: want, Meta: meta}})
		if err != nil {
			t.Fatalf("idle process %d: %v", inc, err)
		}
		p := &idle{c: c, id: c.HelloOK().Worker, stop: make(chan struct{})}
		idles = append(idles, p)
		beats.Add(1)
		go func() {
			defer beats.Done()
			defer c.Close()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
					c.Send(ctx, &wire.Frame{Type: wire.MsgHeartbeat, Worker: p.id})
				}
			}
		}()
		return p
	}
	dialIdle(0, 1000)

	fz := newFreezer(tr)
	type result struct {
		res worker.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: fz, Token: "secret", ID: -1, Data: ds, ConnectTimeout: 5 * time.Second})
		done <- result{res, err}
	}()
	state := func(p int) membership.State {
		coord.mu.Lock()
		defer coord.mu.Unlock()
		if p >= coord.ms.Len() {
			return membership.Unseen
		}
		return coord.ms.Member(p).State
	}
	waitFor("the join's first pushes", func() bool { return coord.Stats().Pushes >= 5 })
	fz.set(true)
	waitFor("the stopped join's removal", func() bool { return state(1) == membership.Removed })
	capN := idCap(desc)
	for inc := uint64(2000); coord.Stats().Live < capN; inc++ {
		if p := dialIdle(-1, inc); p.id == 1 {
			break
		}
	}
	coord.mu.Lock()
	holder := coord.ms.Member(1).Inc
	coord.mu.Unlock()
	if holder < 2000 {
		t.Fatalf("id 1 is held by process %d, not one of the idle ones: coordinator %+v", holder, coord.Stats())
	}
	fz.set(false)
	// Every id is in use: the stopped worker's Hello is refused as
	// unavailable, and retried, until an idle process (not the one that
	// has id 1) goes and is removed.
	close(idles[1].stop)
	freed := int(idles[1].id)
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatalf("the job hung: coordinator %+v", coord.Stats())
	}
	st := coord.Stats()
	t.Logf("worker ended as %d (freed %d): %v; pushes %d of %d, removed %d, joined %d; its pushes %v", r.res.ID, freed, r.err,
		st.Pushes, st.Target, st.Removed, st.Joined, st.WorkerPushes)
	if r.err != nil {
		t.Fatalf("the stopped join ended with %v: want it to finish the job under a fresh id", r.err)
	}
	if r.res.ID != freed {
		t.Errorf("the stopped join ended as worker %d, want the freed id %d", r.res.ID, freed)
	}
	if !st.Done || st.Pushes < st.Target {
		t.Errorf("job not done: pushes %d of %d", st.Pushes, st.Target)
	}
	// At the cap's edge: 67 processes went through the job's 66 ids, and
	// the shards were asked to take no id beyond them.
	if n := len(st.WorkerPushes); n != capN {
		t.Errorf("the job admitted %d ids, want its cap of %d and no more", n, capN)
	}
	if st.WorkerPushes[freed] == 0 {
		t.Errorf("no push counted under the fresh id %d: %v", freed, st.WorkerPushes)
	}
}
