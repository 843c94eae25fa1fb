package wire

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"
)

// benchFloats is the acceptance size: one 10-million-float block (40 MB).
const benchFloats = 10_000_000

// BenchmarkDataPlane compares a push and a pull of one 10M-float block
// through this package over loopback TCP with the same bytes moved by plain
// TCP (conn.Write of a 40 MB []byte, io.ReadFull into a reused buffer, a
// one-byte reply), interleaved in the same iterations so machine noise hits
// both alike. Reported: raw_GB/s, wire_GB/s, ratio = wire/raw throughput
// over the whole run and ratio_p50, the median of per-iteration ratios.
//
//	go test -run XXX -bench DataPlane -benchtime 20x ./wire/
func BenchmarkDataPlane(b *testing.B) {
	for _, dir := range []string{"push", "pull"} {
		b.Run(dir, func(b *testing.B) {
			raw := newRawPeer(b, dir == "push")
			c := benchWire(b)
			ctx := context.Background()
			block := make([]float32, benchFloats)
			for i := range block {
				block[i] = float32(i)
			}
			req := Frame{Type: MsgPush, Floats: block}
			if dir == "pull" {
				req = Frame{Type: MsgPull, Count: benchFloats}
			}
			resp := Frame{Floats: make([]float32, benchFloats)}
			op := func() {
				if err := c.Call(ctx, &req, &resp); err != nil {
					b.Fatal(err)
				}
			}
			op() // warm-up: fault in every buffer on both sides
			raw.op()
			var rawT, wireT time.Duration
			pairs := make([]float64, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternate which goes first so neither inherits the
				// other's cache and socket-buffer state systematically.
				first, second, tFirst, tSecond := raw.op, op, &rawT, &wireT
				if i%2 == 1 {
					first, second, tFirst, tSecond = op, raw.op, &wireT, &rawT
				}
				t0 := time.Now()
				first()
				t1 := time.Now()
				second()
				t2 := time.Now()
				r0, w0 := rawT, wireT
				*tFirst += t1.Sub(t0)
				*tSecond += t2.Sub(t1)
				pairs = append(pairs, (rawT-r0).Seconds()/(wireT-w0).Seconds())
			}
			b.StopTimer()
			slices.Sort(pairs)
			bytes := float64(4*benchFloats) * float64(b.N)
			b.ReportMetric(bytes/rawT.Seconds()/1e9, "raw_GB/s")
			b.ReportMetric(bytes/wireT.Seconds()/1e9, "wire_GB/s")
			b.ReportMetric(rawT.Seconds()/wireT.Seconds(), "ratio")
			// The median of per-iteration ratios shrugs off a noise burst
			// that hits one transfer of a pair on a shared machine.
			b.ReportMetric(pairs[len(pairs)/2], "ratio_p50")
		})
	}
}

// benchWire serves a shard that acknowledges pushes without applying them
// (the raw reference applies nothing either) and answers pulls from a
// resident 10M-float vector.
func benchWire(b *testing.B) *Conn {
	weights := make([]float32, benchFloats)
	h := func(ctx context.Context, req, resp *Frame) error {
		switch req.Type {
		case MsgPush:
			resp.Type, resp.Count = MsgPushAck, uint32(len(req.Floats))
		case MsgPull:
			resp.Type, resp.Floats = MsgPullResp, weights[req.Offset:req.Offset+uint64(req.Count)]
		}
		return nil
	}
	cfg := Config{Token: testToken}
	srv, err := NewServer(cfg, h)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := TCP{}.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	c, err := Dial(ctx, TCP{}, ln.Addr().String(), ClientConfig{Config: cfg, Hello: Hello{Role: "bench", Worker: 0}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(); cancel(); <-done })
	return c
}

// rawPeer is the reference: the same bytes over a bare TCP connection.
type rawPeer struct {
	c    net.Conn
	buf  []byte
	ack  []byte
	push bool
}

func newRawPeer(b *testing.B, push bool) *rawPeer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		s, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		defer s.Close()
		buf, ack := make([]byte, 4*benchFloats), make([]byte, 1)
		for {
			if push {
				if _, err := io.ReadFull(s, buf); err != nil {
					return
				}
				if _, err := s.Write(ack); err != nil {
					return
				}
			} else {
				if _, err := io.ReadFull(s, ack); err != nil {
					return
				}
				if _, err := s.Write(buf); err != nil {
					return
				}
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &rawPeer{c: c, buf: make([]byte, 4*benchFloats), ack: make([]byte, 1), push: push}
}

func (r *rawPeer) op() {
	var err error
	if r.push {
		if _, err = r.c.Write(r.buf); err == nil {
			_, err = io.ReadFull(r.c, r.ack)
		}
	} else {
		if _, err = r.c.Write(r.ack); err == nil {
			_, err = io.ReadFull(r.c, r.buf)
		}
	}
	if err != nil {
		panic(err)
	}
}

// BenchmarkCallSmall measures the per-call overhead of a small request and
// reply (heartbeat-sized) on both transports.
func BenchmarkCallSmall(b *testing.B) {
	for _, name := range []string{"inproc", "tcp"} {
		b.Run(name, func(b *testing.B) {
			var tr Transport = TCP{}
			if name == "inproc" {
				tr = new(Inproc)
			}
			cfg := Config{Token: testToken}
			srv, _ := NewServer(cfg, func(ctx context.Context, req, resp *Frame) error {
				resp.Type, resp.Tag = MsgHeartbeat, req.Tag
				return nil
			})
			ln, err := tr.Listen("127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go srv.Serve(ctx, ln)
			c, err := Dial(ctx, tr, ln.Addr().String(), ClientConfig{Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req, resp := Frame{Type: MsgHeartbeat}, Frame{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req.Tag = uint64(i)
				if err := c.Call(ctx, &req, &resp); err != nil || resp.Tag != uint64(i) {
					b.Fatal(err)
				}
			}
		})
	}
}
