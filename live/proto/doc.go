// Package proto is the application protocol of pacer's live runtime, on top
// of package wire's frames (docs/protocol.md): what the servers (package
// live) and their clients (package live/client: workers and observers)
// both speak. It holds the roles a connection names in its Hello, the
// control operations (ops.go: one typed list), the flag bits of this
// protocol's frames, the JSON messages both sides encode and decode (the
// Hello's meta, the HelloOK payloads, the counters of a "stats" reply), a
// clock report's loss payload, and the redial discipline both sides share
// (dial.go).
//
// Neither side's logic lives here: the server never imports its clients,
// the clients never import the server, and both import this package.
package proto
