// Package wire is pacer's data plane: the binary frame format, the stream
// codec, and authenticated request/response connections over a pluggable
// Transport (TCP, optionally TLS, or in-process pipes). The byte-level
// format is specified in docs/protocol.md; this comment is for the people
// who use or change the code.
//
// # Use
//
// A server (shard server, coordinator) runs one Handler per request:
//
//	srv, err := wire.NewServer(wire.Config{Token: tok}, func(ctx context.Context, req, resp *wire.Frame) error {
//		switch req.Type {
//		case wire.MsgPush:
//			if err := wire.CheckFinite(req.Floats); err != nil {
//				return err // sent back as an Error frame with CodeNonFinite
//			}
//			... apply req.Floats at req.Offset ...
//			resp.Type, resp.Tag = wire.MsgPushAck, version
//		}
//		return nil
//	})
//	ln, err := wire.TCP{}.Listen("127.0.0.1:7070")
//	err = srv.Serve(ctx, ln) // until ctx is cancelled
//
// A worker dials once per shard and reuses its Frames, so a 10M-float pull
// lands directly in the same []float32 every iteration:
//
//	c, err := wire.Dial(ctx, wire.TCP{}, addr, wire.ClientConfig{
//		Config: wire.Config{Token: tok}, Hello: wire.Hello{Role: "worker", Worker: -1},
//		OnNotify: func(f *wire.Frame) { ... Release, Shutdown ... }})
//	id := c.HelloOK().Worker
//	err = c.Call(ctx, &wire.Frame{Type: wire.MsgPull, Shard: s, Offset: off, Count: n, Extra: minVersion}, &resp)
//	err = c.Send(ctx, &wire.Frame{Type: wire.MsgClock, Worker: id, Tag: t}) // one-way
//
// A coordinator answers one-way frames later, from any goroutine, through
// the Peer a handler finds with PeerFrom(ctx): peer.Send(&releaseFrame).
//
// Use Inproc instead of TCP{} for `--mode inproc` and tests; everything
// above the byte stream (framing, token, limits, timeouts) is shared.
//
// # Implementation notes
//
//   - Header first, allocation second: a frame's 56-byte header is fully
//     validated (magic, version, type, reserved bits, lengths against each
//     other and against Config.MaxPayload) before any payload buffer is
//     sized, so a lying length costs nothing.
//   - Float payloads are never encoded per element on little-endian hosts:
//     floats_le.go reinterprets the []float32 as bytes (unsafe.Slice) and
//     bufio hands slices larger than its 256 KiB buffer straight to the
//     socket in both directions. floats_portable.go (big-endian hosts, or
//     -tags purego) converts through the bufio buffer without allocating.
//     Test both: `go test ./wire/ && go test -tags purego ./wire/`.
//   - Buffer reuse is the throughput story: a fresh 40 MB buffer per message
//     costs page faults worth about half of loopback bandwidth. Decoding
//     reuses Frame.Floats/Bytes capacity; the server keeps one request and
//     one response Frame per connection; the client reads a reply's payload
//     directly into the caller's resp Frame (give it capacity, and the reply
//     lands there: a worker points it at its own parameters). A
//     connection's last call record and a peer's notice queues are reused,
//     so steady traffic allocates about nothing
//     (BenchmarkCallSmall reports it). What a connection keeps is bounded
//     all the same: a handler bounds each peer's frames when it accepts
//     the Hello (Peer.LimitPayload), a refused frame's buffer is dropped,
//     and a connection quiet for Config.IdleRelease gives back its payload
//     and bufio buffers (it waits for its next byte unbuffered).
//   - Checking while receiving: Hooks.Floats sees a float payload in
//     PieceFloats pieces as each arrives, while it is in the cache (a shard
//     screens pushed gradients for NaN and ±Inf this way, off the
//     acknowledgement path); a refusal still reads the rest of the frame,
//     so the connection goes on, and the handler never sees the frame.
//   - Notices never wait on a peer: Peer.Send queues the frame and the
//     connection's sender goroutine writes it, so a peer that stops
//     reading holds up only itself, and is cut off once MaxQueuedNotices
//     pile up or a write times out.
//   - One connection, many calls: Conn assigns request ids and a reader
//     goroutine routes each reply to its caller (ReqID 0 frames go to
//     OnNotify). The server handles a connection's requests in order, one
//     at a time, which is why a worker keeps one connection per shard.
//   - Failure is final: any decode error, I/O error or abandoned Call closes
//     the connection (after a bad frame the stream position is unknown; after
//     an abandoned call a late reply would land in a buffer the caller took
//     back). Application errors travel as Error frames and keep it open.
//   - Authentication: the first frame must be a Hello whose token matches;
//     both tokens are SHA-256 hashed and compared in constant time. Failures
//     get an Error frame, a closed connection and a Stats.AuthFailures tick.
//   - Counters live in Stats (atomics) so the metrics layer can export them
//     without this package importing Prometheus.
package wire
