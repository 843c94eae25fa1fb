package live

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

func bytesFloats(t *testing.T, b []byte) []float32 {
	t.Helper()
	v, err := floatsOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The mean is of every recorded worker's latest buffers, a worker's new
// ones replacing its old; the counters are the lowest id's; buffers of
// another length are refused and change nothing; a removed worker leaves
// the mean.
func TestWorkerBuffersMean(t *testing.T) {
	var b workerBuffers
	check := func(what string, got proto.Buffers, err error, mean []float32, counters []int64, workers, from int) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if m := bytesFloats(t, got.Buffers); !slices.Equal(m, mean) || !slices.Equal(got.Counters, counters) ||
			got.Workers != workers || got.From != from {
			t.Fatalf("%s: mean %v counters %v of %d workers from %d; want %v %v of %d from %d",
				what, m, got.Counters, got.Workers, got.From, mean, counters, workers, from)
		}
	}
	got, err := b.put(1, []float32{2, 4}, []int64{7}, true)
	check("worker 1 alone", got, err, []float32{2, 4}, []int64{7}, 1, 1)
	got, err = b.put(0, []float32{4, 8}, []int64{3}, true)
	check("workers 0 and 1", got, err, []float32{3, 6}, []int64{3}, 2, 0)
	got, err = b.put(0, []float32{0, 0}, []int64{5}, true)
	check("worker 0's newer buffers", got, err, []float32{1, 2}, []int64{5}, 2, 0)
	if _, err := b.put(2, []float32{1}, []int64{1}, true); err == nil || !strings.Contains(err.Error(), "not the same model") {
		t.Fatalf("buffers of another length: %v, want refused", err)
	}
	got, err = b.put(1, []float32{2, 4}, []int64{7}, true)
	check("after the refusal", got, err, []float32{1, 2}, []int64{5}, 2, 0)
	b.forget(0)
	got, err = b.put(1, []float32{2, 4}, []int64{7}, true)
	check("worker 0 removed", got, err, []float32{2, 4}, []int64{7}, 1, 1)
	// A worker not live: counted in its answer, kept by nobody.
	got, err = b.put(0, []float32{4, 8}, []int64{3}, false)
	check("worker 0 not live", got, err, []float32{3, 6}, []int64{3}, 2, 0)
	got, err = b.put(1, []float32{2, 4}, []int64{7}, true)
	check("after it", got, err, []float32{2, 4}, []int64{7}, 1, 1)
}

// The mean's bits do not depend on the order the workers' buffers came in
// (summed in id order, in float64).
func TestWorkerBuffersOrder(t *testing.T) {
	vals := map[int][]float32{0: {1e8, 1}, 1: {1, 3e-8}, 2: {-1e8, 7}}
	var first []byte
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		var b workerBuffers
		var got proto.Buffers
		for _, p := range order {
			var err error
			if got, err = b.put(p, vals[p], nil, true); err != nil {
				t.Fatal(err)
			}
		}
		if first == nil {
			first = got.Buffers
		} else if !slices.Equal(first, got.Buffers) {
			t.Fatalf("order %v: mean %v, the first order's %v", order, bytesFloats(t, got.Buffers), bytesFloats(t, first))
		}
	}
}

// Over a worker's data connection to shard 0: each worker's buffers in,
// the live workers' mean out; a worker the coordinator removes leaves it;
// bad buffers (not whole floats, NaN, of another model, none, on an
// observer's connection, to another shard than 0) are refused, counted,
// and change nothing.
func TestWorkerSendsBuffers(t *testing.T) {
	sv, tr := ctrlShard(t, "asp", 2, 1, 0, false, nil)
	sh := sv.Shard()
	w0, w1 := dialWorker(t, tr, 0), dialWorker(t, tr, 1)
	send := func(c *wire.Conn, floats []float32, counters []int64, raw []byte) (proto.Buffers, error) {
		t.Helper()
		if raw == nil {
			raw = floatBytes(floats)
		}
		body, err := json.Marshal(proto.Control{Op: proto.OpBuffers, Buffers: raw, Counters: counters})
		if err != nil {
			t.Fatal(err)
		}
		var resp wire.Frame
		if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgControl, Bytes: body}, &resp); err != nil {
			return proto.Buffers{}, err
		}
		var out proto.Buffers
		if resp.Type != wire.MsgControl {
			t.Fatalf("reply of type %s", resp.Type)
		}
		if err := json.Unmarshal(resp.Bytes, &out); err != nil {
			t.Fatal(err)
		}
		return out, nil
	}
	want := func(what string, got proto.Buffers, err error, mean []float32, counters []int64, workers int) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if m := bytesFloats(t, got.Buffers); !slices.Equal(m, mean) || !slices.Equal(got.Counters, counters) || got.Workers != workers {
			t.Fatalf("%s: %v %v of %d workers, want %v %v of %d", what, m, got.Counters, got.Workers, mean, counters, workers)
		}
	}
	got, err := send(w1, []float32{1, 0.5, -2}, []int64{40}, nil)
	want("worker 1", got, err, []float32{1, 0.5, -2}, []int64{40}, 1)
	got, err = send(w0, []float32{3, 1.5, 2}, []int64{41}, nil)
	want("worker 0", got, err, []float32{2, 1, 0}, []int64{41}, 2)

	refused := sh.Stats().Refused
	obs := dialRole(t, tr, proto.RoleObserver)
	for _, c := range []struct {
		name     string
		conn     *wire.Conn
		floats   []float32
		counters []int64
		raw      []byte
		msg      string
	}{
		{"not whole floats", w1, nil, []int64{1}, []byte{1, 2, 3, 4, 5}, "whole number"},
		{"NaN", w1, []float32{1, float32(math.NaN()), 3}, []int64{1}, nil, "finite"},
		{"another model", w1, []float32{1, 2}, []int64{1}, nil, "not the same model"},
		{"fewer counters", w1, []float32{1, 2, 3}, nil, nil, "not the same model"},
		{"none", w1, nil, nil, []byte{}, "none sent"},
		{"from an observer", obs, []float32{1, 2, 3}, []int64{1}, nil, "unknown control op"},
	} {
		_, err := send(c.conn, c.floats, c.counters, c.raw)
		var re *wire.RemoteError
		if !errors.As(err, &re) || re.Code != wire.CodeBadRequest || !strings.Contains(re.Message, c.msg) {
			t.Errorf("%s: %v, want bad_request saying %q", c.name, err, c.msg)
		}
	}
	if st := sh.Stats(); st.Refused != refused+6 {
		t.Errorf("refused %d, want %d", st.Refused, refused+6)
	}
	got, err = send(w0, []float32{3, 1.5, 2}, []int64{41}, nil)
	want("after the refusals", got, err, []float32{2, 1, 0}, []int64{41}, 2)

	sh.setMembers([]int{1}, []int{0}, "test")
	got, err = send(w1, []float32{1, 0.5, -2}, []int64{42}, nil)
	want("worker 0 removed", got, err, []float32{1, 0.5, -2}, []int64{42}, 1)
	// Removed worker 0 sends before its return reaches the shard: its
	// answer counts its buffers, the others' mean does not keep them.
	got, err = send(w0, []float32{3, 1.5, 2}, []int64{41}, nil)
	want("removed worker 0's", got, err, []float32{2, 1, 0}, []int64{41}, 2)
	got, err = send(w1, []float32{1, 0.5, -2}, []int64{42}, nil)
	want("worker 1 after it", got, err, []float32{1, 0.5, -2}, []int64{42}, 1)

	_, tr1 := ctrlShard(t, "asp", 2, 2, 1, false, nil)
	if _, err := send(dialWorker(t, tr1, 0), []float32{1}, nil, nil); err == nil || !strings.Contains(err.Error(), "shard 0") {
		t.Errorf("buffers sent to shard 1: %v, want refused naming shard 0", err)
	}
}
