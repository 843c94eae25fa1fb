package proto

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/wire"
)

// Observer is the client side of a running job for launchers and tools:
// one observer connection to one shard, over which it reads the shard's
// (and on shard 0 the coordinator's) counters, fetches the shard's
// weights and stops the job. It holds the control token, so only those who
// hold it (the launcher, an operator) can build one. It dials lazily and,
// when the connection breaks (the shard restarting), dials again; it is
// not safe for concurrent use.
type Observer struct {
	tr    wire.Transport
	addr  string
	shard int
	cc    wire.ClientConfig
	// GiveUp bounds how long a dial keeps retrying before the call fails
	// (0: for as long as the call's context lives).
	GiveUp time.Duration
	conn   *wire.Conn
}

// NewObserver returns an observer of shard index at addr.
func NewObserver(tr wire.Transport, addr string, shard int, token, controlToken string) *Observer {
	cc := wire.ClientConfig{Hello: ControlHello(RoleObserver, controlToken, nil)}
	cc.Token = token
	return &Observer{tr: tr, addr: addr, shard: shard, cc: cc}
}

// Connected reports whether the observer holds an open connection.
func (o *Observer) Connected() bool { return o.conn != nil }

// Close closes the connection, if any.
func (o *Observer) Close() error {
	if o.conn == nil {
		return nil
	}
	err := o.conn.Close()
	o.conn = nil
	return err
}

// call runs a request, redialling while the shard is away (it may be
// restarting). A refusal by the shard (a RemoteError) is returned as is.
func (o *Observer) call(ctx context.Context, req, resp *wire.Frame) error {
	return o.callBlock(ctx, req, resp, -1)
}

// callBlock is call for a request whose reply holds at most floats values
// (floats < 0: any). A larger reply is refused unread
// (wire.Conn.CallBlock) and returned, not asked for again.
func (o *Observer) callBlock(ctx context.Context, req, resp *wire.Frame, floats int) error {
	for {
		if o.conn == nil {
			c, err := DialRetry(ctx, o.tr, o.addr, o.cc, o.GiveUp)
			if err != nil {
				return err
			}
			o.conn = c
		}
		var err error
		if floats < 0 {
			err = o.conn.Call(ctx, req, resp)
		} else {
			err = o.conn.CallBlock(ctx, req, resp, floats)
		}
		var re *wire.RemoteError
		if err == nil || errors.As(err, &re) || ctx.Err() != nil {
			return err
		}
		if errors.Is(err, wire.ErrTooLarge) {
			o.Close()
			return fmt.Errorf("live: shard %d: %w", o.shard, err)
		}
		o.Close()
		if !Sleep(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// Stats returns the shard's counters, with the coordinator's on shard 0.
func (o *Observer) Stats(ctx context.Context) (Stats, error) {
	var req, resp wire.Frame
	var st Stats
	if err := req.SetJSON(wire.MsgControl, Control{Op: OpStats}); err != nil {
		return st, err
	}
	if err := o.call(ctx, &req, &resp); err != nil {
		return st, err
	}
	return st, resp.JSON(&st)
}

// Weights copies the shard's current block into w, which must have the
// block's length (job.Ranges gives it).
func (o *Observer) Weights(ctx context.Context, w []float32) error {
	var req, resp wire.Frame
	req.Type, req.Shard, req.Worker = wire.MsgPull, uint32(o.shard), -1
	if err := o.callBlock(ctx, &req, &resp, len(w)); err != nil {
		return err
	}
	if len(resp.Floats) != len(w) {
		return fmt.Errorf("live: shard %d sent %d floats for a block of %d", o.shard, len(resp.Floats), len(w))
	}
	copy(w, resp.Floats)
	// The reply pointed into the shard's snapshot; the acknowledgement
	// releases it (doc.go, Pull).
	ack := wire.Frame{Type: wire.MsgHeartbeat, Shard: uint32(o.shard), Worker: -1}
	o.conn.Send(ctx, &ack)
	return nil
}

// Average copies the shard's block of the weights' moving average (the
// job's --ema) into w; the shard refuses when the job keeps none.
func (o *Observer) Average(ctx context.Context, w []float32) error {
	var req, resp wire.Frame
	if err := req.SetJSON(wire.MsgControl, Control{Op: OpAverage}); err != nil {
		return err
	}
	if err := o.callBlock(ctx, &req, &resp, len(w)); err != nil {
		return err
	}
	if resp.Type != wire.MsgPullResp || len(resp.Floats) != len(w) {
		return fmt.Errorf("live: shard %d sent a %s of %d floats for an average of %d", o.shard, resp.Type, len(resp.Floats), len(w))
	}
	copy(w, resp.Floats)
	return nil
}

// Evaluated copies the block the job's evaluation reads into w: the
// moving average when the job keeps one (ema: --ema, what the
// backup-workers paper evaluates), the weights otherwise.
func (o *Observer) Evaluated(ctx context.Context, ema bool, w []float32) error {
	if ema {
		return o.Average(ctx, w)
	}
	return o.Weights(ctx, w)
}

// AwaitVersion waits until the shard's version reaches v (ElasticBSP
// apply=local: the job's last barrier, which the coordinator's link
// delivers on its own time), polling its counters, for at most within.
func (o *Observer) AwaitVersion(ctx context.Context, v uint64, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		st, err := o.Stats(ctx)
		if err != nil {
			return fmt.Errorf("live: waiting for shard %d to apply barrier %d: %w", o.shard, v, err)
		}
		if st.Shard.Version >= v {
			return nil
		}
		if !Sleep(ctx, 10*time.Millisecond) {
			return fmt.Errorf("live: shard %d is at version %d after %s; the job's last barrier is %d", o.shard, st.Shard.Version, within, v)
		}
	}
}

// Stop asks the job to stop (shard 0: the coordinator tells every worker
// to shut down).
func (o *Observer) Stop(ctx context.Context) error {
	var req, resp wire.Frame
	if err := req.SetJSON(wire.MsgControl, Control{Op: OpStop}); err != nil {
		return err
	}
	return o.call(ctx, &req, &resp)
}
