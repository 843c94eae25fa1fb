package proto

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wire"
)

// Roles a connection names in its Hello. The token authenticates; the role
// says which handler serves the connection.
const (
	RoleWorker      = "worker"      // a worker's data connection to one shard
	RoleControl     = "control"     // a worker's control connection to the coordinator (shard 0)
	RoleCoordinator = "coordinator" // the coordinator's membership link to a shard
	RoleObserver    = "observer"    // pacer train and tools: stats and weight pulls
)

// Application flag bits (wire.FlagsApp) of this protocol's frames.
const (
	FlagPending  uint8 = 1 // PullResp: the shard's version is below the minimum; a ready notice follows
	FlagDropped  uint8 = 2 // PushAck: the aggregator refused the gradient (stale or surplus)
	FlagRejoined uint8 = 4 // Clock reply: the worker had been removed and was admitted again
	FlagReady    uint8 = 8 // one-way PullResp without data: the version a pending pull waits for exists
	// FlagSwitch (Release; bits mean something per frame type, and the
	// wire leaves the application four): the release that ends a
	// paradigm switch (--paradigm auto): its payload is the new Regime
	// (JSON); the worker continues from a full pull at the regime's Base.
	FlagSwitch uint8 = 1
)

// JobInfo is what the coordinator tells every worker (the JSON payload of
// its HelloOK): the job's description, whole, and the worker's place in
// it, so a worker needs only the coordinator's address and the token.
type JobInfo struct {
	ID       int   `json:"id"`    // the worker id assigned to this connection
	Clock    int64 `json:"clock"` // the gate's clock for this worker
	Rejoined bool  `json:"rejoined,omitempty"`
	// Held: the gate holds this id (its earlier process pushed and waits
	// for a release): a returning worker waits for that release before
	// its first pull.
	Held bool `json:"held,omitempty"`
	// Barriers and BarrierPushes (ElasticBSP apply=local): the barriers
	// the gate has passed and the pushes counted at the latest, as a
	// release carries them: a worker's first pull reads that version.
	Barriers      uint64 `json:"barriers,omitempty"`
	BarrierPushes int64  `json:"barrier_pushes,omitempty"`
	// Regime (--paradigm auto): the paradigm in force, nil before the
	// first switch.
	Regime     *Regime  `json:"regime,omitempty"`
	ShardAddrs []string `json:"shard_addrs"`
	// Job is the job's description as job.Description encodes it: the
	// protocol carries it whole and each side decodes and checks it (its
	// version first), so the protocol depends on no job field.
	Job json.RawMessage `json:"job"`
}

// ShardInfo is the JSON payload of a shard's HelloOK.
type ShardInfo struct {
	Shard       int    `json:"shard"`
	Shards      int    `json:"shards"`
	Lo          int    `json:"lo"`
	Hi          int    `json:"hi"`
	Version     uint64 `json:"version"`
	Incarnation uint64 `json:"incarnation"` // differs on every start: a worker sees a restart
}

// ShardStats is a shard's counters (the "stats" control reply).
type ShardStats struct {
	Shard       int    `json:"shard"`
	Version     uint64 `json:"version"`
	Incarnation uint64 `json:"incarnation"`
	Pushes      int64  `json:"pushes"`
	Updates     int64  `json:"updates"`
	Dropped     int64  `json:"dropped"`
	Refused     int64  `json:"refused"` // refused frames: unknown shard or worker, wrong length, NaN, implausible version, bad role
	NonFinite   int64  `json:"non_finite"`
	// NonFiniteUpdates are applies skipped because their result held a
	// NaN or ±Inf (finite pushes whose sum, or whose step, overflowed).
	NonFiniteUpdates int64  `json:"non_finite_updates"`
	CopyOnWrite      int64  `json:"copy_on_write"` // applies that found a pull still sending the version
	Skipped          uint64 `json:"skipped"`       // versions lost to a restart and skipped forward
	// Applied counts the gradients the applies took (a round's mean each
	// of its gradients) and Held those kept for a later apply now:
	// Pushes = Applied + Dropped + Held, always.
	Applied int64 `json:"applied"`
	Held    int64 `json:"held"`
	// Switches are the --paradigm auto regimes this shard has taken, and
	// SwitchDropped the gradients a switch dropped (its rule could not
	// apply them: none among the candidates live modes take).
	Switches      int64 `json:"switches,omitempty"`
	SwitchDropped int64 `json:"switch_dropped,omitempty"`
	// Rule is the paradigm the shard applies by under --paradigm auto
	// (its regime's; "" otherwise): at a job's end every shard's is the
	// coordinator's (CoordStats.Paradigm).
	Rule        string  `json:"rule,omitempty"`
	Staleness   []int64 `json:"staleness"` // histogram, index = staleness
	Checkpoints int64   `json:"checkpoints"`
	// CheckpointFailures counts writes that failed (a full disk, an
	// unwritable directory); CheckpointVersion is the version the last
	// written checkpoint holds, so Version − CheckpointVersion is what a
	// crash would lose now.
	CheckpointFailures int64  `json:"checkpoint_failures"`
	CheckpointVersion  uint64 `json:"checkpoint_version"`
	// RestoredVersion and RestoredCRC describe the checkpoint this process
	// started from (CRC-32C of the weights as restored); zero without one.
	Restored        bool   `json:"restored"`
	RestoredVersion uint64 `json:"restored_version"`
	RestoredCRC     uint32 `json:"restored_crc"`
	// Under --durability log: records replayed at the restore; pushes
	// that repeated one already logged (a retry whose acknowledgement was
	// lost), acknowledged without being applied twice; the log's records
	// appended, bytes written and fsyncs (records ÷ fsyncs: the group
	// commit's sharing).
	Replayed   int64 `json:"replayed,omitempty"`
	Retries    int64 `json:"retries,omitempty"`
	LogRecords int64 `json:"log_records,omitempty"`
	LogBytes   int64 `json:"log_bytes,omitempty"`
	LogFsyncs  int64 `json:"log_fsyncs,omitempty"`
	// LogFailures counts the log's outages (a write or fsync failed):
	// pushes were refused and the shard rolled back until it took writes.
	LogFailures int64 `json:"log_failures,omitempty"`
	// PullReplies are the times this shard took to answer workers' pulls
	// with their block, from the request to the reply's write (its lock,
	// its log, an emulated server delay): pacer profile's server delays.
	PullReplies runstats.IterStats `json:"pull_replies"`
	Wire        wire.StatsSnapshot
}

// CoordStats are the coordinator's counters.
type CoordStats struct {
	Pushes          int64   `json:"pushes"`
	Target          int64   `json:"target"`
	Done            bool    `json:"done"`
	Seconds         float64 `json:"seconds"` // from the first worker's hello to done (or now)
	Releases        int64   `json:"releases"`
	MaxGap          int64   `json:"max_gap"`
	ControllerCalls int64   `json:"controller_calls"`
	// Barriers (ElasticBSP apply=local) is the barriers the shards are
	// told to apply: the gate's, and one that ends the job's last superstep.
	Barriers       uint64    `json:"barriers,omitempty"`
	ControllerSecs float64   `json:"controller_seconds"` // wall time of those calls
	Live           int       `json:"live"`
	Removed        int64     `json:"removed"`
	NeverConnected int64     `json:"never_connected"` // of the removed: ids no worker ever connected under
	Joined         int64     `json:"joined"`
	Restarts       int64     `json:"restarts"` // times the coordinator restarted from its state file
	Refused        int64     `json:"refused"`  // control frames refused (unknown id, implausible clock report)
	WorkerPushes   []int64   `json:"worker_pushes"`
	WorkerWait     []float64 `json:"worker_wait"` // seconds held (push, gate, pull)
	WorkerBusy     []float64 `json:"worker_busy"` // seconds computing
	// WorkerIter are each worker's iteration times (pacer profile).
	WorkerIter []runstats.IterStats `json:"worker_iterations,omitempty"`
	// BatchLossSum and BatchLosses are the sum and the count of the
	// mini-batch losses the workers reported with their counted pushes,
	// since the job started: running totals, not a mean, so any number of
	// observers can each take the mean over their own windows
	// (Evaluations: since its previous evaluation) without the
	// coordinator keeping a window per reader. A coordinator restored from
	// its state file goes on from the totals the file holds (the losses
	// of reports answered after the file was written are lost: the
	// workers say how many reports were answered, not their losses).
	BatchLossSum float64 `json:"batch_loss_sum,omitempty"`
	BatchLosses  int64   `json:"batch_losses,omitempty"`
	// Incarnation names this coordinator (random, per process). A
	// restored one names in RestoredFrom the coordinator that wrote its
	// state file (0: none, or a file written before this field) and in
	// RestoredLossSum and RestoredLosses the totals that file held: an
	// observer's window goes on across the restart only from a look at
	// that writer no later than the file.
	Incarnation     uint64  `json:"incarnation,omitempty"`
	RestoredFrom    uint64  `json:"restored_from,omitempty"`
	RestoredLossSum float64 `json:"restored_loss_sum,omitempty"`
	RestoredLosses  int64   `json:"restored_losses,omitempty"`
	// Decisions are --paradigm auto's, in order, and Paradigm the rule in
	// force (auto only).
	Decisions []runstats.Decision `json:"decisions,omitempty"`
	Paradigm  string              `json:"paradigm,omitempty"`
}

// Stats is the reply to a "stats" control request.
type Stats struct {
	Shard ShardStats  `json:"shard"`
	Coord *CoordStats `json:"coord,omitempty"`
}

// A clock report's payload is the pushed gradient's mini-batch loss, a
// little-endian IEEE-754 float64, or empty: a worker that does not report
// it (an older client) is not counted in the loss.
const LossBytes = 8

// SetLoss puts loss in clock report f's payload (reusing its capacity).
func SetLoss(f *wire.Frame, loss float64) {
	f.Bytes = binary.LittleEndian.AppendUint64(f.Bytes[:0], math.Float64bits(loss))
}

// MaxLoss bounds a reported loss: the models compute in float32, so a loss
// beyond its range is no model's, and under the bound the coordinator's
// float64 total cannot overflow (an infinite total would fail every stats
// reply and state file after it).
const MaxLoss = math.MaxFloat32

// ReportedLoss reads a clock report's payload b: ok is false when it
// carries no loss. A loss no cross-entropy takes (negative, NaN, infinite,
// beyond float32's range) or a payload of another length is refused:
// frames are untrusted, and one such value would spoil every mean it
// entered.
func ReportedLoss(b []byte) (loss float64, ok bool, err error) {
	switch len(b) {
	case 0:
		return 0, false, nil
	case LossBytes:
	default:
		return 0, false, fmt.Errorf("a clock report's payload is its mini-batch loss, %d bytes (or none), not %d", LossBytes, len(b))
	}
	loss = math.Float64frombits(binary.LittleEndian.Uint64(b))
	if math.IsNaN(loss) || math.IsInf(loss, 0) || loss < 0 || loss > MaxLoss {
		return 0, false, fmt.Errorf("a clock report's mini-batch loss must be finite and non-negative, at most %g, not %g", float64(MaxLoss), loss)
	}
	return loss, true, nil
}
