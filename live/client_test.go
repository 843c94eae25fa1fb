package live

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// The proto.Observer is the launcher's whole view of a job: the coordinator's
// counters, a shard's weights, and stopping the job; without the control
// token it gets nothing.
func TestObserver(t *testing.T) {
	sv, tr := testServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := proto.NewObserver(tr, "s0", 0, "secret", "control-secret")
	defer o.Close()
	if o.Connected() {
		t.Fatal("connected before the first call")
	}
	st, err := o.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Coord == nil || st.Coord.Target != sv.cfg.Params.Pushes() || st.Coord.Done || !o.Connected() {
		t.Fatalf("stats %+v (coordinator %+v), want shard 0's with the job's %d pushes to go", st, st.Coord, sv.cfg.Params.Pushes())
	}
	want, _ := sv.Shard().Weights()
	got := make([]float32, len(want))
	if err := o.Weights(ctx, got); err != nil || !slices.Equal(got, want) {
		t.Fatalf("weights: %v; equal to the shard's: %v", err, slices.Equal(got, want))
	}
	if err := o.Weights(ctx, make([]float32, len(want)+1)); err == nil || !strings.Contains(err.Error(), "for a block of") {
		t.Errorf("a block of the wrong length: %v", err)
	}
	if err := o.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = o.Stats(ctx); err != nil || !st.Coord.Done {
		t.Errorf("after stop: %+v, %v; want the job done", st.Coord, err)
	}

	bad := proto.NewObserver(tr, "s0", 0, "secret", "not-the-control-token")
	defer bad.Close()
	if _, err := bad.Stats(ctx); wire.CodeOf(err) != wire.CodeUnauthenticated {
		t.Errorf("a wrong control token: %v, want unauthenticated", err)
	}
}
