package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// A shard 0 restarted (--restore) after its job ended, as a cluster's pod
// restarts, finds the coordinator's state file saying so: it keeps the
// summary.json written at the end (the whole curve, the job's counts)
// instead of writing one of its own incarnation over it, and a shard 0
// that ends by itself stops. Without a summary to keep it writes one, as
// before.
func TestRestartAfterEndKeepsSummary(t *testing.T) {
	for _, kept := range []bool{true, false} {
		dir := t.TempDir()
		ck, out := filepath.Join(dir, "ckpt"), filepath.Join(dir, "out")
		cfg := quickJob(t, "bsp", 2, 1)
		if err := cfg.Fill(); err != nil {
			t.Fatal(err)
		}
		d := &job.Description{Version: job.Version, Job: cfg, TrainN: 320}
		st := coordState{Version: coordStateVersion, Paradigm: cfg.Spec.String(), Workers: 2, Target: d.Pushes(),
			Pushes: d.Pushes(), Done: true, Started: time.Now().Add(-time.Minute).UnixNano(),
			Members: []memberState{{Pushes: d.Pushes() / 2}, {Pushes: d.Pushes() - d.Pushes()/2}}}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{ck, out} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(coordFile(ck), b, 0o644); err != nil {
			t.Fatal(err)
		}
		const written = `{"paradigm": "bsp", "curve": [[1, 0.5], [2, 0.7]], "final_accuracy": 0.7}` + "\n"
		summary := filepath.Join(out, "summary.json")
		if kept {
			if err := os.WriteFile(summary, []byte(written), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tr := &wire.Inproc{}
		ln, err := tr.Listen("s0")
		if err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		sv, err := NewServer(ServerConfig{Index: 0, Params: d, Listener: ln, Transport: tr, Token: "secret",
			ControlToken: "control-secret", ShardAddrs: []string{"s0"}, CheckpointDir: ck, Restore: true,
			ExitWhenDone: true, SummaryDir: out, Logger: newTestLogger(&logs)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- sv.Run(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("kept=%v: Run: %v", kept, err)
			}
		case <-time.After(waitGuard): // a guard: an ended job's shard 0 stops by itself
			cancel()
			<-done
			t.Fatalf("kept=%v: shard 0 of an ended job still runs after %s:\n%s", kept, waitGuard, logs.String())
		}
		cancel()
		got, err := os.ReadFile(summary)
		if err != nil {
			t.Fatalf("kept=%v: %v", kept, err)
		}
		if kept && (string(got) != written || !strings.Contains(logs.String(), "had ended before this restart")) {
			t.Errorf("the restarted shard 0 wrote over the job's summary:\n%s\nlog:\n%s", got, logs.String())
		}
		if !kept && string(got) == written {
			t.Error("no summary written where there was none")
		}
	}
}
