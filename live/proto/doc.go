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
package proto
