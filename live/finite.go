package live

import (
	"fmt"

	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/wire"
)

// screen checks a pushed piece (at index off of its block) for NaN and
// ±Inf, and says whether it holds a value of 2⁴⁰ or more (the apply of a
// gradient that does saves what it overwrites): one pass, at
// FirstNonFinite's speed, a second over the rest only past such a value.
func screen(v []float32, off int) (large bool, err error) {
	i := kernel.FirstAtLeast(v, optim.SmallBits)
	if i < 0 {
		return false, nil
	}
	return true, proto.FiniteAt(v[i:], off+i)
}

// screenPush is the wire server's Floats hook: a worker's pushed gradient
// is checked piece by piece as it arrives, while each piece is still in the
// cache, instead of in a second pass over the whole block after it is in
// (where the scan sat on the push's acknowledgement path). A push that the
// handler would refuse for another reason (its shape, its worker, its
// role) is left to the handler, so every refusal keeps its reason.
func (sv *Server) screenPush(peer *wire.Peer, f *wire.Frame, piece []float32, off int) error {
	s := sv.shard
	if f.Type != wire.MsgPush || f.Flags != 0 || peer.Hello().Role != proto.RoleWorker || s.pushShape(peer, f) != nil {
		return nil
	}
	large, err := screen(piece, off)
	if err != nil {
		return s.refuse(wire.CodeNonFinite, "shard %d: gradient of worker %d refused: %v", s.idx, f.Worker, err)
	}
	if large {
		s.screenLarge.Store(peer, true) // taken by the push's handler, next on this connection
	}
	return nil
}

// finiteState refuses a checkpoint of non-finite state. Applies skip every
// update that would make one, so this is the last guard: a checkpoint
// that a restore would refuse is never written.
func finiteState(w []float32, o optim.State, ema []float32) error {
	for _, b := range []struct {
		what string
		v    []float32
	}{{"weight", w}, {"velocity", o.Velocity}, {"squared gradient", o.Square}, {"mean gradient", o.Mean}, {"moving average", ema}} {
		if err := proto.FiniteAt(b.v, 0); err != nil {
			return fmt.Errorf("live: the shard's %s is not finite, no checkpoint written: %w", b.what, err)
		}
	}
	return nil
}
