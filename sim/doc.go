// Package sim is the discrete-event simulator: a virtual clock, K workers and
// S shards, per-worker iteration-time models and per-shard server delays
// (package timing), and a pull → compute → push → release cycle per worker,
// driven only by the policy core (package paradigm). It does no gradient
// math unless a Learner is plugged in (package train does, for virtual-time
// training). Run(cfg) is deterministic for cfg.Seed.
//
// Implementation notes. Events are 24-byte values in a hand-written 4-ary
// heap ordered by time and then by a packed (kind, worker, shard) key, so
// simultaneous events run in a canonical order whichever paradigm scheduled
// them: that is what makes PARADIGMS.md's reductions (backup b=0 ≡ BSP, …)
// hold event for event. With a network, the events scheduled a fixed
// delay ahead (one latency: arrivals, requests, releases; reports;
// replies) mostly come in order and wait in FIFO lanes beside the heap;
// a pop takes the first of the heap's and the lanes' firsts, so the order
// is the same. A shard answers a pull only once its version reaches
// the puller's minimum; waiting pulls are served when an apply reaches it.
// Pulls that neither wait nor see a server delay are completed inline
// without an event. Worker iteration times and the delay of each (shard,
// worker) pair's pull responses come from their own random streams, so every
// paradigm sees the same draws. A worker's waiting time runs from its push to
// the start of its next compute. Trace and Progress are optional hooks for
// tests and the command line.
package sim
