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
// # Roles, connections and the application protocol
//
// What the servers and their clients say to each other, role by role and
// frame by frame, is package live/proto's documentation.
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
