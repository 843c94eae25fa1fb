package live

import (
	"cmp"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/gradnoise"
	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wal"
	"github.com/pacer-ps/pacer/wire"
)

// snapshot is one version of the shard's block. Pull replies point into it
// without copying (the wire server writes the reply after the handler
// returns), so it is never written while refs > 0: an apply then writes a
// fresh copy instead (copy on write). A reference lasts while its reply is
// being written (Shard.replied, or Shard.closed if the connection ends
// first), never longer: a peer that pulls and goes quiet pins nothing.
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
	params  *job.Description
	agg     paradigm.Aggregator
	// spec is the rule agg runs: the job's, or under --paradigm auto the
	// regime's (gen, shard_switch.go).
	spec paradigm.Spec
	gen  uint64
	// noise measures the gradient noise scale on this block for auto's
	// planner (shard 0 of an auto job; nil otherwise).
	noise *gradnoise.Meter
	opt   *optim.Optimizer
	log   *slog.Logger
	plog  *ratelog.Logger // peer-driven lines (nil: none)
	start time.Time
	// clock, when set, is the shard's time instead of the wall clock's
	// since start: a test drives it (the time is an input).
	clock func() time.Duration
	inc   uint64

	cur *snapshot
	// ema is the weights' moving average under --ema or --ema-time (nil without):
	// stepped after every apply, so a replayed log rebuilds it too; the
	// job's evaluation reads it instead of cur (Observer.Average).
	ema []float32
	// emaAt is the shard's clock at its last update (EMATime's dt; after
	// a restart, from the restart: a replayed update moves θ̄ by little).
	emaAt time.Duration
	// superEpoch (ElasticBSP apply=local): the epoch at the last barrier,
	// the superstep's learning-rate epoch.
	superEpoch float64
	spare      []*snapshot
	held       map[*wire.Peer]*snapshot
	waiters    map[*wire.Peer]uint64
	grads      map[uint64][]float32
	free       [][]float32 // spare gradient buffers (shard_bufs.go)
	maxFree    int
	nextID     uint64
	members    map[int]bool // this shard's view of membership (true: live); its keys are the admitted ids
	// bufs is the live workers' model buffers (shard 0; buffers.go).
	bufs workerBuffers
	// restarted: started with --restore, so workers may hold versions this
	// incarnation has not reached (see checkHeld).
	restarted bool
	// awaitRegime: a restarted shard (not 0) of an auto job takes no push
	// until the coordinator's view has told it the regime in force
	// (shard_switch.go): under the first candidate's rule it would apply
	// the workers' pushes by another rule than theirs, and number its
	// versions so that they wait for one that never comes.
	awaitRegime bool

	tick        *time.Timer
	tickAt      time.Duration
	tickOn      bool
	dirty       bool
	stats       proto.ShardStats
	repliesMu   sync.Mutex // pulls are timed outside mu, on their connections
	replies     runstats.IterAcc
	gs          [][]float32
	ws          []float32
	dropIDs     []uint64
	ckptDir     string
	notifyCh    []waiter
	notifySpare []waiter
	split       splitApply // the apply's parts (shard_split.go)

	// The durability log (shard_log.go); wal is nil under --durability
	// checkpoint. lsn is the last record appended; walErr a failed append.
	screened  bool // pushes over the wire were checked as they arrived (Server.screenPush)
	logged    bool // log mode: keep meta and last even before wal is open (replay)
	wal       *wal.Log
	lsn       wal.LSN
	walErr    error
	rec       wal.Record
	replaying bool
	meta      map[uint64]pushMeta
	last      map[int]lastPush
	dur       durState // a failed log's recovery (shard_log.go)
	// screenLarge: connections whose push being read holds a value of
	// 2⁴⁰ or more (Server.screenPush; its apply saves what it overwrites).
	screenLarge sync.Map
}

// ShardConfig builds a Shard.
type ShardConfig struct {
	Index  int
	Params *job.Description
	// Restore, when set, is the checkpoint to start from (weights,
	// velocity, version); otherwise the block is cut from the model's
	// seeded w⁰.
	Restore *ckpt.State
	// Init is the full initial parameter vector (w⁰); required without Restore.
	Init []float32
	// Restarted says the shard runs with --restore (with or without a
	// checkpoint): it may have lost versions that workers hold.
	Restarted bool
	Logger    *slog.Logger
}

func newShard(cfg ShardConfig) (*Shard, error) {
	p := cfg.Params
	j := &p.Job
	if cfg.Index < 0 || cfg.Index >= j.Shards {
		return nil, remoteErr(wire.CodeBadRequest, "shard index %d outside [0, %d)", cfg.Index, j.Shards)
	}
	agg, err := paradigm.NewAggregator(j.Spec.Start(), paradigm.Config{Workers: j.Workers, Shards: j.Shards}, cfg.Index)
	if err != nil {
		return nil, err
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
	s := &Shard{idx: cfg.Index, shards: j.Shards, lo: r[0], hi: r[1], nparams: n, params: p,
		agg: agg, spec: j.Spec.Start(), opt: opt, log: log.With("shard", cfg.Index), start: time.Now(),
		inc:  uint64(time.Now().UnixNano()) | 1,
		held: map[*wire.Peer]*snapshot{}, waiters: map[*wire.Peer]uint64{}, grads: map[uint64][]float32{},
		members: map[int]bool{}, restarted: cfg.Restarted || cfg.Restore != nil,
		meta: map[uint64]pushMeta{}, last: map[int]lastPush{}}
	s.awaitRegime = s.restarted && j.Spec.Kind == paradigm.Auto && cfg.Index != 0
	for q := 0; q < j.Workers; q++ {
		s.members[q] = true
	}
	s.cur = &snapshot{buf: hugemem.Floats(r[1] - r[0])}
	if st := cfg.Restore; st != nil {
		if st.Shard != cfg.Index || st.Lo != r[0] || st.Hi != r[1] {
			return nil, remoteErr(wire.CodeBadRequest, "checkpoint of shard %d [%d, %d) does not fit shard %d [%d, %d)",
				st.Shard, st.Lo, st.Hi, cfg.Index, r[0], r[1])
		}
		copy(s.cur.buf, st.Weights)
		// Centered RMSProp is RMSProp by name; the header's flag tells
		// the two states apart, or in a file written before it, the
		// mean gradient.
		rule := func(name string, centered bool) string {
			if centered {
				return name + ":centered=true"
			}
			return name
		}
		if want, got := rule(j.Optimizer.Kind.String(), j.Optimizer.Centered), rule(cmp.Or(st.Optimizer, optim.SGD.String()), st.Centered || st.Mean != nil); want != got {
			return nil, fmt.Errorf("live: restore: the checkpoint holds the state of optimizer %s, the job's --optimizer is %s (restore with the optimizer it was written with)", got, want)
		}
		if err := opt.SetState(optim.State{Velocity: st.Velocity, Square: st.Square, Mean: st.Mean, Step: st.Step}); err != nil {
			return nil, fmt.Errorf("live: restore: the checkpoint holds %d velocity values, the job's momentum is %g (restore with the momentum it was written with): %w",
				len(st.Velocity), j.Optim().Momentum, err)
		}
		if j.Averaged() && st.EMA != nil {
			s.ema = hugemem.Floats(len(st.EMA))
			copy(s.ema, st.EMA)
		}
		agg.Reset(st.Version, nil)
		s.stats.Restored, s.stats.RestoredVersion = true, st.Version
		s.stats.RestoredCRC = WeightsCRC(s.cur.buf)
		s.stats.CheckpointVersion = st.Version // what the file on disk holds
	} else {
		copy(s.cur.buf, cfg.Init[r[0]:r[1]])
		s.dur.w0 = slices.Clone(s.cur.buf) // what a failed log rolls back to before a checkpoint
	}
	if j.Averaged() && s.ema == nil {
		// θ̄ starts at θ: at w⁰, as virtual time's; restored from a
		// checkpoint written without it, at the checkpoint's weights.
		s.ema = hugemem.Floats(len(s.cur.buf))
		copy(s.ema, s.cur.buf)
	}
	s.initSpares(j.Spec, j.Workers)
	if j.Spec.Kind == paradigm.Auto && cfg.Index == 0 {
		s.noise = gradnoise.New(j.Batch)
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

func (s *Shard) now() time.Duration {
	if s.clock != nil {
		return s.clock()
	}
	return time.Since(s.start)
}

// info is the HelloOK payload.
func (s *Shard) info() proto.ShardInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.ShardInfo{Shard: s.idx, Shards: s.shards, Lo: s.lo, Hi: s.hi, Version: s.agg.Version(), Incarnation: s.inc}
}

// maxPush is the largest payload a push to this shard can carry: its whole
// block as float32, in bytes (capped at what a frame can declare).
func (s *Shard) maxPush() int {
	return int(min(4*uint64(s.hi-s.lo), uint64(wire.MaxPayloadLimit)))
}

// refuse counts a bad request and returns the error sent back; the server
// logs it (rate-limited, with the peer's address) when it answers.
func (s *Shard) refuse(code wire.ErrorCode, format string, a ...any) error {
	s.mu.Lock()
	s.stats.Refused++
	if code == wire.CodeNonFinite {
		s.stats.NonFinite++
	}
	s.mu.Unlock()
	return remoteErr(code, format, a...)
}

// admit checks a worker's data connection: its id must be one the
// coordinator admitted (the job's workers, and ids it assigned to joins,
// as its membership view says). The server then replaces an older
// connection of the id (Server.admit).
func (s *Shard) admit(id int32) error {
	if id < 0 || int(id) >= idCap(s.params) {
		return s.refuse(wire.CodeBadRequest, "a worker's data connection must name its id in [0, %d), got %d", idCap(s.params), id)
	}
	s.mu.Lock()
	if _, ok := s.members[int(id)]; !ok {
		// Unavailable, not bad_request: a join's id reaches this shard
		// with the coordinator's next membership view, and the worker
		// retries until then.
		return s.refuseLocked(remoteErr(wire.CodeUnavailable, "worker %d has not been admitted by the coordinator (shard %d knows ids %s)",
			id, s.idx, idRanges(s.members)))
	}
	s.mu.Unlock()
	return nil
}

// refuseErr counts a refusal whose error is already made.
func (s *Shard) refuseErr(err error) error {
	s.mu.Lock()
	return s.refuseLocked(err)
}

// refuseLocked counts a refusal found with the lock held, releases the
// lock and returns err.
func (s *Shard) refuseLocked(err error) error {
	s.stats.Refused++
	if wire.CodeOf(err) == wire.CodeNonFinite {
		s.stats.NonFinite++
	}
	s.mu.Unlock()
	return err
}
