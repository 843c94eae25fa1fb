// Package proto is the application protocol of pacer's live runtime, on top
// of package wire's frames (docs/protocol.md): what the servers (package
// live) and their clients (package live/worker, and observers)
// both speak. It holds the roles a connection names in its Hello, the
// control operations (ops.go: one typed list), the flag bits of this
// protocol's frames, the JSON messages both sides encode and decode (the
// Hello's meta, the HelloOK payloads, the counters of a "stats" reply), a
// clock report's loss payload, the finite check of a frame's floats, the
// redial discipline and the wait-report schedule both sides share
// (dial.go, wait.go), and the Observer (observer.go): the control-role
// client of one shard through which launchers and tools read a job's
// counters and weights and stop it, and through which shard 0 watches and
// evaluates its peers.
//
// Neither side's logic lives here: the server never imports its clients,
// the clients never import the server, and both import this package.
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
// launcher hold (package live, auth.go). A shard admits the worker ids in the
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
//     apply=local's barrier count, package live's shard_barrier.go), "members" (coordinator →
//     shard: the complete live/removed view, resent after reconnects),
//     "end" (coordinator → shard, on the same link, after the latest view:
//     the job has ended; the shard replies, checkpoints and stops).
package proto
