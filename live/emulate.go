package live

import (
	"context"
	"sync"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/timing"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the live modes' emulated slow servers (--server-delay). A
// worker's pull reply that carries its block waits, before it is written,
// the delay the job's server-delay model draws for that (shard, worker)
// pair: the simulator's streams (sim's index shard×K+worker), so a live
// run and its prediction draw alike. It runs on the connection's
// goroutine after the shard has answered and outside its lock: the shard's
// own code knows nothing of it, and a job without server delays pays one
// nil check a request.

type serverDelay struct {
	mu    sync.Mutex // the streams are not safe for concurrent use
	s     *timing.Servers
	shard int
	k     int
}

// newServerDelay is the emulation of p's server delays on shard (nil:
// none).
func newServerDelay(p *job.Description, shard int) (*serverDelay, error) {
	j := &p.Job
	if j.ServerDelay.IsZero() {
		return nil, nil
	}
	k := idCap(p) // ids past Workers (joins) get streams of their own
	s, err := timing.NewServers(j.ServerDelay, j.Shards, k, j.Seed)
	if err != nil {
		return nil, err
	}
	return &serverDelay{s: s, shard: shard, k: k}, nil
}

// hold waits the delay of worker's next pull reply (or until ctx ends).
func (d *serverDelay) hold(ctx context.Context, worker int32) {
	if worker < 0 || int(worker) >= d.k {
		return
	}
	d.mu.Lock()
	dur := d.s.PullDelay(d.shard*d.k + int(worker))
	d.mu.Unlock()
	if dur > 0 {
		proto.Sleep(ctx, dur)
	}
}

// delays reports whether resp is a worker's pull reply with its block.
func delays(peer *wire.Peer, req, resp *wire.Frame) bool {
	return req.Type == wire.MsgPull && resp.Type == wire.MsgPullResp && len(resp.Floats) > 0 && peer != nil && peer.Hello().Role == proto.RoleWorker
}
