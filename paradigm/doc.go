// Package paradigm is pacer's policy core: the decisions of every
// synchronization paradigm of PARADIGMS.md (BSP, ASP, SSP, DSSP, ElasticBSP,
// sync SGD with backup workers, PSP and n-softsync) and delay, the
// backup-workers paper's fixed staleness, as a pure, deterministic state
// machine in the manner of etcd's raft package.
//
// There are no goroutines, no clock, no I/O and no randomness here. Every
// input carries the time (since the job's start) as an argument and every
// output is a value, so the same code decides in the simulator (package sim),
// in virtual-time training (package train) and in the live server (package
// live), and a recorded trace replays bit for bit.
//
// Use: Parse a spec string, then New(spec, Config{Workers, Shards}) gives a
// Policy with
//   - Gate, one per job: Pushed(now, p) returns the workers it releases
//     (Policy.Pushed and Policy.Leave return a Ready: the applies due on
//     every shard, then the releases);
//   - Aggs, one per shard: Push(now, Grad) accepts or drops a gradient and
//     says when to apply which gradients with which weights (Apply);
//   - Pullers, one per worker: the version each shard must reach before it
//     answers a pull, how many fresh blocks are needed, PSP's τ2 grace.
//
// A process that owns one piece builds only that piece, from the same spec
// and job size: NewGate (the coordinator), NewAggregator(spec, cfg, i)
// (shard i), NewPuller (a worker). Aggregator.Reset restarts a shard at a
// known version (after a restore). Backup's set=shared ties the shards'
// aggregators together and exists only in a whole Policy. Elastic
// apply=local is built piecewise when the driver carries the gate's
// barrier count (Barriers) to every shard's Superstep and, with each
// release, to the worker's Puller (SetBarriers).
//
// Timers (PSP's τ1 and τ2) are exposed as Deadline and driven by Tick. A dead
// worker is removed with Policy.Leave, a new one added with Policy.Join.
// None of the types is safe for concurrent use: the driver serializes calls.
//
// Implementation notes: clocks keeps per-clock counts so the minimum clock is
// O(1) amortized (clocks.go); held workers wait in a heap keyed by the
// minimum clock that releases them (so releases come in a deterministic
// order), or under DSSP's wait=next in a list per slowest worker, woken by
// its next push; every hold is numbered, so an entry left behind by a worker
// that left never releases it after it rejoins; synchronous aggregators sort an apply's contributions by worker, so
// the floating-point sum does not depend on arrival order. Each paradigm has
// its own file; docs/paradigms.md lists every decision taken where the papers
// leave room.
//
// Tests: testdata/*.txt are scripted traces, one or more per paradigm (a
// script of pushes, leaves and timer ticks and the release, hold, apply and
// drop log each leads to), replayed by TestTraces (trace_test.go, with
// github.com/cockroachdb/datadriven); each was checked by hand against
// the specification (PARADIGMS.md). The claim_*_test.go files hold one test per claim of
// the papers or of PARADIGMS.md, named for it.
package paradigm
