package live

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the workers' model buffers (a BatchNorm's running mean and
// variance), which are not parameters: no gradient moves them, so the
// optimizer cannot. Each worker sends its own after every pull (op
// "buffers", to shard 0) and takes back the mean of every live worker's
// latest, so the workers evaluate and go on from one set of statistics
// measured over all their batches, as DDP's broadcast_buffers keeps its
// ranks' alike (DDP copies rank 0's instead: under an asynchronous
// paradigm there is no moment at which every worker has the same
// batches behind it, and a mean loses no worker's). Integer buffers (a
// BatchNorm's num_batches_tracked) are counts, not estimates: they are the
// lowest live worker id's, unaveraged.
//
// The state is soft: it lives in shard 0's memory only, and a restarted
// shard 0 rebuilds it from the workers' next sends (each worker's latest
// already holds everything the mean had). A removed worker's buffers leave
// the mean with it.

// MaxBufferCounters bounds one worker's integer buffers. Its float
// buffers are bounded by the frame a worker's data connection may send
// (maxWorkerControlBytes): shard 0's block (4 bytes a float) or the job's
// largest control frame, whichever is larger; base64 takes 16 bytes for
// every 3 floats, so at least 12,000 floats always fit, and a model's
// BatchNorm statistics (2 floats a channel, beside 9·cin per channel of
// its 3×3 convolution alone) fit in a block many times over.
const MaxBufferCounters = 1 << 12

// maxWorkerControlBytes is the largest Control frame a worker's data
// connection may send to a shard whose largest push is maxPush bytes: the
// connection's frame limit (admit), never below a Hello's.
func maxWorkerControlBytes(p *job.Description, maxPush int) int {
	return max(controlPayload(p), maxPush)
}

type workerBuffer struct {
	floats   []float32
	counters []int64
}

// workerBuffers is each live worker's latest buffers.
type workerBuffers struct {
	mu  sync.Mutex
	by  map[int]workerBuffer
	sum []float64 // scratch for the mean
}

// put records worker p's buffers (replacing its previous ones) and returns
// the mean of every recorded worker's floats, the counters of the lowest
// recorded id, how many workers the mean is of, and that id. Buffers of
// another length than the other workers' are refused, changing nothing:
// they are of another model.
//
// A worker the shard does not hold live (removed, its return not yet in
// the shard's view) gets the mean with its buffers counted but not kept:
// a worker that never returns must not stay in the mean.
func (b *workerBuffers) put(p int, floats []float32, counters []int64, live bool) (proto.Buffers, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[int]workerBuffer{}
	}
	for q, e := range b.by {
		if q != p && (len(e.floats) != len(floats) || len(e.counters) != len(counters)) {
			return proto.Buffers{}, remoteErr(wire.CodeBadRequest,
				"buffers: worker %d sent %d floats and %d counters, worker %d sent %d and %d: not the same model",
				p, len(floats), len(counters), q, len(e.floats), len(e.counters))
		}
	}
	old, had := b.by[p]
	b.by[p] = workerBuffer{floats: floats, counters: counters}
	out, _ := b.meanLocked()
	if !live {
		delete(b.by, p)
		if had {
			b.by[p] = old // its own entry's removal is leave's (forget), not this call's
		}
	}
	return out, nil
}

// mean is put's answer without a put; false when no live worker has sent
// buffers.
func (b *workerBuffers) mean() (proto.Buffers, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.meanLocked()
}

func (b *workerBuffers) meanLocked() (proto.Buffers, bool) {
	if len(b.by) == 0 {
		return proto.Buffers{}, false
	}
	ids := make([]int, 0, len(b.by))
	for q := range b.by {
		ids = append(ids, q)
	}
	// Summed in id order, in float64: the same workers' buffers give the
	// same bits whatever order they arrived in.
	slices.Sort(ids)
	n := len(b.by[ids[0]].floats)
	if cap(b.sum) < n {
		b.sum = make([]float64, n)
	}
	sum := b.sum[:n]
	clear(sum)
	for _, q := range ids {
		for i, v := range b.by[q].floats {
			sum[i] += float64(v)
		}
	}
	mean := make([]float32, n)
	for i, v := range sum {
		mean[i] = float32(v / float64(len(ids)))
	}
	return proto.Buffers{Buffers: floatBytes(mean), Counters: slices.Clone(b.by[ids[0]].counters),
		Workers: len(ids), From: ids[0]}, true
}

// writeBuffers writes the live workers' mean buffers as dir/buffers.json
// (a Buffers, as the op answers it), atomically, beside the job's
// model.npz: the model's weights alone evaluate wrong where its buffers
// are statistics. "" and no error when no worker sent buffers.
func (sv *Server) writeBuffers(dir string) (string, error) {
	out, ok := sv.shard.bufs.mean()
	if !ok {
		return "", nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "buffers.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// forget drops worker p's buffers (it was removed from the job).
func (b *workerBuffers) forget(p int) {
	b.mu.Lock()
	delete(b.by, p)
	b.mu.Unlock()
}

// floatsOf decodes little-endian float32 bytes, refusing a length that is
// not whole floats or a value that is not finite.
func floatsOf(raw []byte) ([]float32, error) {
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("buffers: %d bytes, not a whole number of float32 values", len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("buffers: value %d is %v: buffers must be finite", i, v)
		}
		out[i] = v
	}
	return out, nil
}

func floatBytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// buffers answers a worker's "buffers" on shard 0.
func (sv *Server) buffers(peer *wire.Peer, c proto.Control, resp *wire.Frame) error {
	if sv.shard.idx != 0 {
		return sv.shard.refuse(wire.CodeBadRequest, "buffers go to shard 0, not shard %d", sv.shard.idx)
	}
	if len(c.Counters) > MaxBufferCounters {
		return sv.shard.refuse(wire.CodeBadRequest, "buffers: %d counters, more than %d", len(c.Counters), MaxBufferCounters)
	}
	floats, err := floatsOf(c.Buffers)
	if err != nil {
		return sv.shard.refuse(wire.CodeBadRequest, "%v", err)
	}
	if len(floats) == 0 && len(c.Counters) == 0 {
		return sv.shard.refuse(wire.CodeBadRequest, "buffers: none sent (no floats, no counters)")
	}
	out, err := sv.shard.bufs.put(int(peer.ID()), floats, c.Counters, sv.shard.isLive(int(peer.ID())))
	if err != nil {
		return sv.shard.refuseErr(err)
	}
	return setJSON(resp, wire.MsgControl, out)
}

// isLive is whether the shard's view holds worker p live.
func (s *Shard) isLive(p int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members[p]
}
