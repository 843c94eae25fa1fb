package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// TestMismatchedShardRefused: two shards started with different job flags
// no longer run together silently. Shard 1 refuses the coordinator's
// membership link (shard 0 logs it at ERROR) and every worker, whose data
// Hello presents the job shard 0 sent it; the worker stops with an error
// naming the field.
func TestMismatchedShardRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*job.Config)
		want   string
	}{
		{"paradigm", func(c *job.Config) { c.Spec = paradigm.Spec{Kind: paradigm.SSP, S: 3} },
			"shard 1's job differs from shard 0's: paradigm ssp:s=3 ≠ bsp"},
		{"lr", func(c *job.Config) { c.LR = 0.2 }, "shard 1's job differs from shard 0's: lr 0.2 ≠ 0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &wire.Inproc{}
			descs := make([]*job.Description, 2)
			for i := range descs {
				c := quickJob(t, "bsp", 1, 2)
				if i == 1 {
					tc.change(&c)
				}
				d, err := job.Describe(c, 256)
				if err != nil {
					t.Fatal(err)
				}
				descs[i] = &d
			}
			var log0 syncBuffer
			for i, name := range []string{"s0", "s1"} {
				ln, err := tr.Listen(name)
				if err != nil {
					t.Fatal(err)
				}
				sc := ServerConfig{Index: i, Params: descs[i], Listener: ln, Transport: tr, Token: "secret",
					ControlToken: "control-secret", ShardAddrs: []string{"s0", "s1"}}
				if i == 0 {
					sc.Logger = newTestLogger(&log0)
				}
				runServer(t, sc)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: 0})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("worker: %v\nwant an error containing %q", err, tc.want)
			}
			// Shard 0's membership link was refused at once, and said so.
			if !awaitLog(&log0, tc.want) {
				t.Fatalf("shard 0's log does not name the mismatch:\n%s", log0.String())
			}
			if !strings.Contains(log0.String(), "level=ERROR") {
				t.Errorf("the refused membership link is not logged at ERROR:\n%s", log0.String())
			}
		})
	}
}

// TestSameJobAccepted: shards of one job (built apart, with per-process
// fields that differ) serve a worker to the end.
func TestSameJobAccepted(t *testing.T) {
	tr := &wire.Inproc{}
	for i, name := range []string{"s0", "s1"} {
		c := quickJob(t, "ssp:s=2", 1, 2)
		c.Epochs = 0.5
		if i == 1 {
			c.DataDir, c.EvalEvery = t.TempDir(), 0.1 // not the job's shape
		}
		d, err := job.Describe(c, 256)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tr.Listen(name)
		if err != nil {
			t.Fatal(err)
		}
		runServer(t, ServerConfig{Index: i, Params: &d, Listener: ln, Transport: tr, Token: "secret",
			ControlToken: "control-secret", ShardAddrs: []string{"s0", "s1"}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: 0})
	if err != nil || res.Pushes == 0 {
		t.Fatalf("worker: %+v, %v", res, err)
	}
}
