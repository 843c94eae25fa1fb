package proto

// Op is a control operation: the "op" of a Control frame's JSON. Ops is the
// one list of them; a server matches on these values and refuses any other.
type Op string

// The control operations, each with who sends it on which connection.
const (
	// OpStats (observer → any shard): the shard's counters, with the
	// coordinator's on shard 0 (the reply is a Stats).
	OpStats Op = "stats"
	// OpAverage (observer, or a worker's data connection: its one control
	// op): the shard's block of the weights' moving average under --ema,
	// answered as a PullResp whose Tag is the shard's version.
	OpAverage Op = "average"
	// OpStop (observer → shard 0): the coordinator tells every worker to
	// shut down.
	OpStop Op = "stop"
	// OpMembers (coordinator → shard, on its membership link): the
	// complete live/removed view, resent after reconnects, with
	// --paradigm auto's regime in force (none before the first switch),
	// which a restarted shard waits for before it takes a push.
	OpMembers Op = "members"
	// OpBarrier (coordinator → shard): ElasticBSP apply=local's barrier
	// count; the shard applies its buffered superstep up to it.
	OpBarrier Op = "barrier"
	// OpEnd (coordinator → shard, on the membership link, after the
	// latest view): the job has ended by itself (--exit-when-done); the
	// shard replies, writes its final checkpoint and stops.
	OpEnd Op = "end"
	// OpBuffers (a worker's data connection → shard 0): the worker's
	// model buffers (a BatchNorm's running statistics) in, the mean of
	// every live worker's latest ones out (a Buffers reply).
	OpBuffers Op = "buffers"
	// OpSwitch (coordinator → shard, on its membership link; --paradigm
	// auto): the paradigm in force from now (Regime: its generation,
	// spec and version); the shard applies what its rule holds, then
	// continues under the new one at that version. Resent after reconnects.
	OpSwitch Op = "switch"
)

// Ops is every control operation, in the order docs/protocol.md lists them.
var Ops = []Op{OpStats, OpAverage, OpStop, OpMembers, OpBarrier, OpEnd, OpBuffers, OpSwitch}

// Control is the JSON body of a MsgControl request.
type Control struct {
	Op      Op     `json:"op"`
	Live    []int  `json:"live,omitempty"`    // members: live worker ids
	Removed []int  `json:"removed,omitempty"` // members: removed worker ids
	Barrier uint64 `json:"barrier,omitempty"` // barrier: the barriers the gate has passed (elastic apply=local)
	// buffers: the worker's float buffers as little-endian float32 bytes
	// (base64 in the JSON: exact bits, a third of a decimal's size), and
	// its integer ones (a BatchNorm's num_batches_tracked).
	Buffers  []byte  `json:"buffers,omitempty"`
	Counters []int64 `json:"counters,omitempty"`
	// switch: the paradigm in force from now.
	Regime *Regime `json:"regime,omitempty"`
}

// Regime is the paradigm in force in a --paradigm auto job: the Gen-th
// the coordinator has switched to (0: the first candidate, from the
// start), its canonical spec, and Base, the version every shard and the
// clock every worker continued at when it began. A switch's release
// carries it (FlagSwitch) and so does the JobInfo of a worker that
// (re)connects, so a worker that missed the release learns it.
type Regime struct {
	Gen      uint64 `json:"gen"`
	Paradigm string `json:"paradigm"`
	Base     uint64 `json:"base"`
}

// Buffers is the reply to a worker's "buffers": the mean of the float
// buffers of every live worker that has sent them (each one's latest), as
// little-endian float32 bytes, and the integer buffers of the lowest such
// worker id (worker 0 while it runs), From.
type Buffers struct {
	Buffers  []byte  `json:"buffers"`
	Counters []int64 `json:"counters"`
	Workers  int     `json:"workers"` // how many workers' buffers the mean is of
	From     int     `json:"from"`    // the worker whose counters these are
}
