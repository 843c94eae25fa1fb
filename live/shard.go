package live

import (
	"hash/crc32"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/ckpt"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// snapshot is one version of the shard's block. Pull replies point into it
// without copying (the wire server writes the reply after the handler
// returns), so it is never written while refs > 0: an apply then writes a
// fresh copy instead (copy on write).
type snapshot struct {
	buf  []float32
	refs int
}

// waiter is a pull that asked for a version the shard has not reached.
type waiter struct {
	peer *wire.Peer
	min  uint64
}

// Shard is one shard server's state: its block of the weights, the
// optimizer state, and its aggregator from the policy core. Every method
// takes the lock; the wire server calls the handler from one goroutine per
// connection.
type Shard struct {
	mu      sync.Mutex
	idx     int
	shards  int
	lo, hi  int
	nparams int
	params  *JobParams
	pol     *paradigm.Policy
	agg     paradigm.Aggregator
	opt     *optim.Optimizer
	log     *slog.Logger
	start   time.Time
	inc     uint64

	cur     *snapshot
	spare   []*snapshot
	held    map[*wire.Peer]*snapshot
	waiters map[*wire.Peer]uint64
	grads   map[uint64][]float32
	free    [][]float32
	nextID  uint64
	members map[int]bool // this shard's view of membership (true: live)

	tick     *time.Timer
	tickAt   time.Duration
	tickOn   bool
	peersFn  func() []*wire.Peer
	dirty    bool
	stats    ShardStats
	gs       [][]float32
	ws       []float32
	dropIDs  []uint64
	ckptDir  string
	notifyCh []waiter
}

// ShardConfig builds a Shard.
type ShardConfig struct {
	Index  int
	Params *JobParams
	// Restore, when set, is the checkpoint to start from (weights,
	// velocity, version); otherwise the block is cut from the model's
	// seeded w⁰.
	Restore *ckpt.State
	// Init is the full initial parameter vector (w⁰); required without Restore.
	Init   []float32
	Logger *slog.Logger
}

func newShard(cfg ShardConfig) (*Shard, error) {
	p := cfg.Params
	j := &p.Job
	pol, err := paradigm.New(j.Spec, paradigm.Config{Workers: j.Workers, Shards: j.Shards})
	if err != nil {
		return nil, err
	}
	if cfg.Index < 0 || cfg.Index >= j.Shards {
		return nil, remoteErr(wire.CodeBadRequest, "shard index %d outside [0, %d)", cfg.Index, j.Shards)
	}
	n := len(cfg.Init)
	if cfg.Restore != nil {
		n = cfg.Restore.NumParams
	}
	r := job.Ranges(n, j.Shards)[cfg.Index]
	opt, err := optim.New(j.Optim(), r[1]-r[0])
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Shard{idx: cfg.Index, shards: j.Shards, lo: r[0], hi: r[1], nparams: n, params: p, pol: pol,
		agg: pol.Aggs[cfg.Index], opt: opt, log: log.With("shard", cfg.Index), start: time.Now(),
		inc:  uint64(time.Now().UnixNano()) | 1,
		held: map[*wire.Peer]*snapshot{}, waiters: map[*wire.Peer]uint64{}, grads: map[uint64][]float32{},
		members: map[int]bool{}}
	for q := 0; q < j.Workers; q++ {
		s.members[q] = true
	}
	s.cur = &snapshot{buf: make([]float32, r[1]-r[0])}
	if st := cfg.Restore; st != nil {
		if st.Shard != cfg.Index || st.Lo != r[0] || st.Hi != r[1] {
			return nil, remoteErr(wire.CodeBadRequest, "checkpoint of shard %d [%d, %d) does not fit shard %d [%d, %d)",
				st.Shard, st.Lo, st.Hi, cfg.Index, r[0], r[1])
		}
		copy(s.cur.buf, st.Weights)
		if err := opt.SetVelocity(st.Velocity); err != nil {
			return nil, err
		}
		pol.ResetShard(cfg.Index, st.Version, nil)
		s.stats.Restored, s.stats.RestoredVersion = true, st.Version
		s.stats.RestoredCRC = WeightsCRC(s.cur.buf)
	} else {
		copy(s.cur.buf, cfg.Init[r[0]:r[1]])
	}
	s.stats.Shard, s.stats.Incarnation = cfg.Index, s.inc
	return s, nil
}

// WeightsCRC is the CRC-32C of a block's little-endian bytes, the figure a
// restored shard reports so a restore can be checked against its file.
func WeightsCRC(w []float32) uint32 {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var b [4096]byte
	for i := 0; i < len(w); {
		k := min(len(b)/4, len(w)-i)
		for j := 0; j < k; j++ {
			u := math.Float32bits(w[i+j])
			b[4*j], b[4*j+1], b[4*j+2], b[4*j+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
		h.Write(b[:4*k])
		i += k
	}
	return h.Sum32()
}

func (s *Shard) now() time.Duration { return time.Since(s.start) }

// info is the HelloOK payload.
func (s *Shard) info() ShardInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ShardInfo{Shard: s.idx, Shards: s.shards, Lo: s.lo, Hi: s.hi, Version: s.agg.Version(), Incarnation: s.inc}
}

// refuse counts a bad request and returns the error sent back.
func (s *Shard) refuse(code wire.ErrorCode, format string, a ...any) error {
	s.mu.Lock()
	s.stats.Refused++
	if code == wire.CodeNonFinite {
		s.stats.NonFinite++
	}
	s.mu.Unlock()
	err := remoteErr(code, format, a...)
	s.log.Warn("refused request", "err", err)
	return err
}

// push serves a gradient block. It may take ownership of req.Floats (the
// gradient waits in the aggregator's buffer) and give the connection a
// recycled buffer instead, so a buffered push costs no copy.
func (s *Shard) push(peer *wire.Peer, req, resp *wire.Frame) error {
	if int(req.Shard) != s.idx {
		return s.refuse(wire.CodeBadRequest, "unknown shard %d (this server holds shard %d of %d)", req.Shard, s.idx, s.shards)
	}
	n := s.hi - s.lo
	if req.Offset != 0 || len(req.Floats) != n {
		return s.refuse(wire.CodeBadRequest, "push of %d floats at offset %d: shard %d takes whole blocks of %d",
			len(req.Floats), req.Offset, s.idx, n)
	}
	w := int(req.Worker)
	if w < 0 || w >= maxWorkers || (peer != nil && peer.ID() != req.Worker) {
		return s.refuse(wire.CodeBadRequest, "push names worker %d on a connection of worker %d", w, peerID(peer))
	}
	if err := checkFinite(req.Floats); err != nil {
		return s.refuse(wire.CodeNonFinite, "shard %d: gradient of worker %d refused: %v", s.idx, w, err)
	}
	s.mu.Lock()
	s.release(peer)
	s.fastForward(req.Extra)
	now := s.now()
	id := s.nextID
	s.nextID++
	g := req.Floats
	ok, applied, a := s.agg.Push(now, paradigm.Grad{ID: id, Worker: w, Read: req.Extra, Clock: req.Tag})
	s.stats.Pushes++
	switch {
	case !ok:
		s.stats.Dropped++
		resp.Flags = flagDropped
	case applied && len(a.Grads) == 1 && a.Grads[0].ID == id:
		s.apply(a, id, g) // apply on arrival straight from the receive buffer
	default:
		s.grads[id] = g
		req.Floats = s.takeBuf(n)
		if applied {
			s.apply(a, id, nil)
		}
	}
	s.armTick()
	resp.Type, resp.Shard, resp.Worker = wire.MsgPushAck, uint32(s.idx), req.Worker
	resp.Tag, resp.Extra = s.agg.Version(), s.inc
	notify := s.takeNotify()
	s.mu.Unlock()
	s.sendReady(notify)
	return nil
}

func peerID(p *wire.Peer) int32 {
	if p == nil {
		return -1
	}
	return p.ID()
}

// pull serves a block read. A pull below its minimum version is answered
// at once as pending; the shard sends a ready notice when the version
// exists, and the worker asks again (a handler never blocks, so one
// connection carries a worker's pushes and pulls alike).
func (s *Shard) pull(peer *wire.Peer, req, resp *wire.Frame) error {
	if int(req.Shard) != s.idx {
		return s.refuse(wire.CodeBadRequest, "unknown shard %d (this server holds shard %d of %d)", req.Shard, s.idx, s.shards)
	}
	n := uint64(s.hi - s.lo)
	off, cnt := req.Offset, uint64(req.Count)
	if cnt == 0 && off == 0 {
		cnt = n
	}
	if off > n || cnt > n-off {
		return s.refuse(wire.CodeBadRequest, "pull of [%d, %d) outside shard %d's block of %d", off, off+cnt, s.idx, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.release(peer)
	s.fastForward(req.Tag)
	v := s.agg.Version()
	resp.Type, resp.Shard, resp.Worker, resp.Offset = wire.MsgPullResp, uint32(s.idx), req.Worker, off
	resp.Tag, resp.Extra = v, s.inc
	if v < req.Extra {
		resp.Flags = flagPending
		if peer != nil {
			s.waiters[peer] = req.Extra
		}
		return nil
	}
	resp.Floats = s.cur.buf[off : off+cnt]
	if peer != nil {
		s.cur.refs++
		s.held[peer] = s.cur
	} else {
		// No connection to release it later (a direct call): copy.
		resp.Floats = append([]float32(nil), resp.Floats...)
	}
	return nil
}

// done releases the snapshot a peer's last pull pointed into: the worker
// acknowledges each pull reply once it has it all.
func (s *Shard) done(peer *wire.Peer) {
	s.mu.Lock()
	s.release(peer)
	s.mu.Unlock()
}

func (s *Shard) release(peer *wire.Peer) {
	sn := s.held[peer]
	if sn == nil {
		return
	}
	delete(s.held, peer)
	sn.refs--
	if sn.refs == 0 && sn != s.cur && len(s.spare) < 2 {
		s.spare = append(s.spare, sn)
	}
}

// writable returns the block to apply into: the current snapshot, or a
// fresh copy of it when a pull reply still points into it.
func (s *Shard) writable() []float32 {
	if s.cur.refs == 0 {
		return s.cur.buf
	}
	s.sweep()
	if s.cur.refs == 0 {
		return s.cur.buf
	}
	s.stats.CopyOnWrite++
	var ns *snapshot
	if k := len(s.spare); k > 0 {
		ns, s.spare = s.spare[k-1], s.spare[:k-1]
	} else {
		ns = &snapshot{buf: make([]float32, len(s.cur.buf))}
	}
	copy(ns.buf, s.cur.buf)
	s.cur = ns
	return ns.buf
}

// sweep drops the references of connections that closed without
// acknowledging their last pull.
func (s *Shard) sweep() {
	if s.peersFn == nil || len(s.held) == 0 {
		return
	}
	open := map[*wire.Peer]bool{}
	for _, p := range s.peersFn() {
		open[p] = true
	}
	for p := range s.held {
		if !open[p] {
			s.release(p)
		}
	}
	for p := range s.waiters {
		if !open[p] {
			delete(s.waiters, p)
		}
	}
}

func (s *Shard) takeBuf(n int) []float32 {
	if k := len(s.free); k > 0 {
		b := s.free[k-1]
		s.free = s.free[:k-1]
		return b[:0]
	}
	return nil
}

// apply carries out an aggregator's apply; self/g name the gradient that
// is still in the receive buffer (not stored), if any.
func (s *Shard) apply(a paradigm.Apply, self uint64, g []float32) {
	s.gs, s.ws = s.gs[:0], s.ws[:0]
	for _, c := range a.Grads {
		if g != nil && c.ID == self {
			s.gs = append(s.gs, g)
		} else {
			s.gs = append(s.gs, s.grads[c.ID])
		}
		s.ws = append(s.ws, float32(c.Weight))
		for int64(len(s.stats.Staleness)) <= c.Staleness {
			s.stats.Staleness = append(s.stats.Staleness, 0)
		}
		if c.Staleness >= 0 {
			s.stats.Staleness[c.Staleness]++
		}
	}
	j := &s.params.Job
	epoch := int64(0)
	if s.params.TrainN > 0 {
		epoch = s.stats.Pushes * int64(j.Batch) / int64(s.params.TrainN)
	}
	lr := j.Optim().Rate(int64(a.Version)-1, epoch) * j.StepScale(a)
	s.opt.ApplyWeighted(s.writable(), s.gs, s.ws, float32(lr))
	for _, c := range a.Grads {
		if b, ok := s.grads[c.ID]; ok {
			delete(s.grads, c.ID)
			s.recycle(b)
		}
	}
	s.stats.Updates++
	s.dirty = true
	for p, m := range s.waiters {
		if m <= a.Version {
			s.notifyCh = append(s.notifyCh, waiter{p, a.Version})
			delete(s.waiters, p)
		}
	}
}

func (s *Shard) recycle(b []float32) {
	if len(s.free) < 4 {
		s.free = append(s.free, b)
	}
}

// fastForward moves the version past what a worker has read: a shard that
// restarted from an older checkpoint learns this way how far it had got
// before it died (within one incarnation a worker never holds a version the
// shard has not reached). The lost updates are gone; the weights stay.
func (s *Shard) fastForward(read uint64) {
	v := s.agg.Version()
	if read <= v {
		return
	}
	s.dropIDs = s.pol.ResetShard(s.idx, read, s.dropIDs[:0])
	for _, id := range s.dropIDs {
		if b, ok := s.grads[id]; ok {
			delete(s.grads, id)
			s.recycle(b)
		}
	}
	s.stats.Dropped += int64(len(s.dropIDs))
	s.stats.Skipped += read - v
	s.log.Warn("version skipped forward after a restart", "from", v, "to", read)
	for p, m := range s.waiters {
		if m <= read {
			s.notifyCh = append(s.notifyCh, waiter{p, read})
			delete(s.waiters, p)
		}
	}
}

func (s *Shard) takeNotify() []waiter {
	n := s.notifyCh
	s.notifyCh = nil
	return n
}

// sendReady tells waiting pulls that their version exists (outside the
// lock: a slow peer must not stall the shard).
func (s *Shard) sendReady(ws []waiter) {
	for _, w := range ws {
		f := wire.Frame{Type: wire.MsgPullResp, Flags: flagReady, Shard: uint32(s.idx), Worker: w.peer.ID(), Tag: w.min, Extra: s.inc}
		w.peer.Send(&f)
	}
}
