// Package worker is the worker of pacer's live runtime (`pacer worker`):
// it joins a job through the coordinator on shard 0, which sends it the
// job's description, then computes gradients on its part of the data,
// pushes them to every shard and pulls the weights back as its paradigm's
// puller says, reporting each push to the coordinator and waiting for its
// release where the gate holds it.
//
// The main loop (worker.go) owns the parameters and the gradient; one
// goroutine per shard link (wlink.go) owns that connection, redials with
// backoff and hands results back as events; the control connection to the
// coordinator (worker_ctl.go) carries clock reports and heartbeats and
// brings releases and the shutdown as notifications. pace.go stretches an
// iteration to a timing model's (an emulated straggler).
//
// It speaks to the servers of package live only through package
// live/proto, and never imports package live.
package worker
