package worker

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// A shard that restarted while a pull waited on it may have lost the last
// push, so the worker pushes it again (evRepush) — but not in the first
// pull after a (re)join: that pull's replies may answer requests sent
// before it, and the gradient it would send again predates the join.
func TestRepushNotInFirstPull(t *testing.T) {
	sp, err := paradigm.Parse("psp:c=0,b=0.5")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		first  bool
		repush bool
	}{
		{"a pull after a push", false, true},
		{"the first pull after a join", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pl, err := paradigm.NewPuller(sp, paradigm.Config{Workers: 2, Shards: 2})
			if err != nil {
				t.Fatal(err)
			}
			st := &state{pl: pl, grad: []float32{1, 2, 3, 4}, ranges: [][2]int{{0, 2}, {2, 4}},
				read: []uint64{3, 3}, pulling: []bool{true, true}, pushing: []bool{false, false},
				pushRead: []uint64{3, 3}, clock: 4, inPull: true, pullFirst: c.first}
			pl.Start(0, st.clock, st.read, c.first)
			links := []*wlink{{ops: make(chan linkOp, 1)}, {ops: make(chan linkOp, 1)}}
			if err := (&Worker{}).handle(st, links, linkEvent{kind: evRepush, shard: 1}); err != nil {
				t.Fatal(err)
			}
			select {
			case op := <-links[1].ops:
				if !c.repush {
					t.Fatalf("pushed again (clock %d) in the first pull after a join", op.clock)
				}
				if op.kind != opPush || op.clock != 3 || op.read != 3 || len(op.data) != 2 || op.data[0] != 3 || !st.pushing[1] {
					t.Fatalf("re-push %+v (pushing %v), want shard 1's block of the last push, clock 3, read 3", op, st.pushing)
				}
			default:
				if c.repush {
					t.Fatal("no re-push after the shard restarted in a pull")
				}
			}
		})
	}
}

// A waiting worker's redials of a coordinator whose connections die young
// are spaced 10 ms doubling to 1 s; one that lived youngLife is redialled
// at once.
func TestRedialPace(t *testing.T) {
	var p redialPace
	t0 := time.Unix(1000, 0)
	now := t0
	var got []time.Duration
	for range 9 {
		d := p.wait(now)
		got = append(got, d)
		now = now.Add(d + time.Millisecond) // the connection lives 1 ms
	}
	want := []time.Duration{0, 10, 20, 40, 80, 160, 320, 640, 1000}
	for i, d := range got {
		if d != want[i]*time.Millisecond {
			t.Fatalf("redial pauses %v, want %v ms", got, want)
		}
	}
	if d := p.wait(now.Add(youngLife)); d != 0 {
		t.Fatalf("after a connection that lived %v: pause %v, want none", youngLife, d)
	}
	if d := p.wait(now.Add(youngLife + time.Second)); d != 10*time.Millisecond {
		t.Fatalf("after one that died young again: pause %v, want 10ms", d)
	}
}
