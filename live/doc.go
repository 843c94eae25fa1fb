// Package live is the server of pacer's live runtime: shard servers and the
// coordinator as real processes over TCP (or goroutines over the in-process
// transport), on the wall clock, with the policy core of package paradigm
// deciding everything a paradigm decides. Its workers are package
// live/worker; the protocol both speak is package live/proto, and neither
// side imports the other.
//
// # Use
//
// Several machines: run NewServer(...).Run on every shard (shard 0 also
// hosts the coordinator) and worker.Run on every worker; roles come from
// flags, PACER_* variables or Kubeflow's TF_CONFIG (package live/roles).
// docs/deploy.md has the recipes. With ServerConfig.ExitWhenDone such a
// job ends by itself (report.go): shard 0 evaluates the model during the
// job and at its end, writes the summary and tells every shard to stop. A proto.Observer reads a running job's counters, fetches its weights
// and stops it. One machine: package launch starts the shards and workers (goroutines
// or processes), watches them through Observers and writes the summary;
// this package never imports it.
//
// # Roles and connections
//
// Every connection is a wire connection whose Hello carries the token and a
// role: a worker holds one data connection per shard (proto.RoleWorker: pushes and
// pulls), one control connection to the coordinator (proto.RoleControl: clock
// reports, heartbeats; releases and shutdown arrive as notifications); the
// coordinator holds a membership link to every shard (proto.RoleCoordinator); the
// launcher and tools connect as proto.RoleObserver (stats, weight pulls, stop). The job
// token makes a worker; the control roles (coordinator, observer) must also
// present the control token in the Hello's meta, which only servers and the
// launcher hold (auth.go). A shard admits the worker ids in the
// coordinator's membership view; a newer connection of an id replaces the
// older one.
//
// # Application protocol (on top of docs/protocol.md's frames)
//
//   - Push: Shard, Worker, Tag = the worker's iteration clock, Extra = the
//     shard version the gradient was computed from, Floats = the whole block.
//     PushAck: Tag = version after, Extra = the shard's incarnation,
//     Flags&2 = dropped by the aggregator.
//   - Pull: Offset/Count (0,0 = the whole block), Tag = the version the
//     worker holds, Extra = the minimum version. A shard never blocks a
//     handler: below the minimum it answers PullResp with Flags&1 (pending)
//     and later sends a one-way PullResp with Flags&8 (ready); the worker
//     asks again. After a data reply the worker sends a one-way Heartbeat on
//     the same connection: the shard's pull replies point into the current
//     weight snapshot without copying, and the acknowledgement ends the
//     reference (an apply meanwhile copies on write instead).
//   - Heartbeat (worker → shard, one-way): Tag = the version of the block
//     the worker holds. Sent after each data reply and, at once, after
//     reconnecting to a restarted shard (a new incarnation).
//   - Clock (worker → coordinator): Tag = the worker's running push count (a
//     retried report is not counted twice), Extra/Offset = cumulative µs
//     held/computing. The reply's Flags&4 says the worker had been removed
//     and was admitted again (Tag = its new clock: it restarts with a full
//     pull). Release and Shutdown are notifications; a Release's Tag is
//     the barriers ElasticBSP's gate has passed, its Extra the pushes
//     counted at the latest (what an apply=local worker pulls by).
//   - Control (JSON; the ops are package live/proto's one list, proto.Ops):
//     "stats", "average" (observer, or a worker's data
//     connection, its one control op: the block of the weights' moving
//     average under --ema, answered as a PullResp),
//     "stop" (observer), "barrier" (coordinator → shard: ElasticBSP
//     apply=local's barrier count, shard_barrier.go), "members" (coordinator →
//     shard: the complete live/removed view, resent after reconnects),
//     "end" (coordinator → shard, on the same link, after the latest view:
//     the job has ended; the shard replies, checkpoints and stops).
//
// # Faults
//
// The coordinator removes a worker silent for job.Config.HeartbeatTimeout
// from the gate and, through the membership links, from every shard's
// aggregator, so no paradigm waits for it; a worker that comes back (or a
// new one, id −1) joins at the gate's minimum clock. Membership is the
// state machine of package live/membership, on an injected clock (its
// traces are the rules). Two allowances keep a busy machine from removing
// live workers: a process that has not pushed yet (loading its data) gets
// four timeouts, and a sweep that runs late (the coordinator itself
// stalled) does not count the stall as silence; the default timeout keeps
// a worker starved 10 s (docs/protocol.md "Heartbeats on a busy
// machine"). Shards checkpoint atomically (package ckpt) on an interval and on shutdown; a
// shard restored from an older checkpoint learns from the versions the
// workers say they hold that it had got further (every worker announces its
// version as soon as it has reconnected, also one held at the gate), and
// skips its version forward (the lost updates are gone, the weights are the
// checkpoint's), while a worker whose pushed gradient was lost with the old
// incarnation pushes it again. A shard killed before its first checkpoint
// restarts from w⁰ the same way. Under --durability log (shard_log.go,
// package wal) nothing acknowledged is lost: every event the aggregator
// decides on is logged under the shard's lock, a push is acknowledged and
// a version handed to a pull only once its records are durable, and a
// restore replays checkpoint + log through the same code, so the shard
// comes back at its last acknowledged version and never needs to skip;
// the checkpoint records the log segment it covers, and the older
// segments go. The launcher aborts, rather than waits,
// when a restart fails or a shard exits on its own. The coordinator's own state
// (counts, membership, gate clocks) is written beside shard 0's checkpoint
// (coord_state.go); a restarted shard 0 restores it and learns what it
// counted since from the workers as they redial.
//
// Every frame is checked before it can touch any state: shard index,
// whole-block length, the sending worker's id and finite values (a pushed
// block is screened piece by piece as it arrives, by the wire server's
// Floats hook Server.screenPush with the AVX2 kernel.FirstNonFinite, so
// the check costs the push almost nothing), and every version, clock and count
// against what the server knows of the job (bounds.go: the admitted ids,
// the versions a shard can have published, the job's in-flight bound); a
// refusal is an error reply with a wire.ErrorCode, counted in
// proto.ShardStats.Refused (proto.CoordStats.Refused) and the metrics, and logged with
// the peer's address through internal/ratelog, so a flood of bad frames
// cannot flood the log. docs/protocol.md lists the checks per frame type.
//
// # Concurrency
//
// The policy objects are not thread-safe: each Shard guards its aggregator,
// optimizer and snapshots with one mutex, the Coordinator its gate with
// another; notifications (ready notices, releases) are sent after the lock is
// released so a slow peer cannot stall a shard. A worker's main loop owns its
// parameters and gradient; one goroutine per shard link owns that
// connection, redials with backoff, and hands results back as events.
package live
