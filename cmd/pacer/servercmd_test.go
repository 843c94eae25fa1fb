package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

func clearRoleEnv(t *testing.T) {
	for _, k := range []string{"PACER_TOKEN", "PACER_CONTROL_TOKEN", "PACER_INDEX", "PACER_PEERS", "PACER_LISTEN", "PACER_WORKERS", "PACER_COORDINATOR", "TF_CONFIG", "HOSTNAME"} {
		t.Setenv(k, "")
	}
}

func TestServerAndWorkerFlagErrors(t *testing.T) {
	clearRoleEnv(t)
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"server", "--index", "0", "--peers", "127.0.0.1:1"}, nil, "PACER_TOKEN"},
		{[]string{"server"}, map[string]string{"PACER_TOKEN": "x"}, "no shard index"},
		{[]string{"server", "--index", "0", "--shards", "2", "--peers", "a:1"}, map[string]string{"PACER_TOKEN": "x"}, "needs all 2 shard addresses"},
		{[]string{"server", "--index", "0", "--paradigm", "nope", "--peers", "a:1"}, map[string]string{"PACER_TOKEN": "x"}, "valid forms"},
		{[]string{"server"}, map[string]string{"TF_CONFIG": `{"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"worker","index":0}}`}, "worker task"},
		{[]string{"worker"}, map[string]string{"PACER_TOKEN": "x"}, "no coordinator"},
		{[]string{"worker", "--coordinator", "a:1"}, nil, "PACER_TOKEN"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--log-level", "loud"}, map[string]string{"PACER_TOKEN": "x"}, "--log-level"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--dataset", "synthetic", "--train-n", "100"}, map[string]string{"PACER_TOKEN": "x"}, "PACER_CONTROL_TOKEN"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--dataset", "synthetic", "--train-n", "100"}, map[string]string{"PACER_TOKEN": "x", "PACER_CONTROL_TOKEN": "x"}, "must differ"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--dataset", "synthetic", "--train-n", "100", "--out", "/proc/version/out"},
			map[string]string{"PACER_TOKEN": "x", "PACER_CONTROL_TOKEN": "y"}, "--out /proc/version/out"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--dataset", "synthetic", "--train-n", "100", "--eval-every", "0"},
			map[string]string{"PACER_TOKEN": "x", "PACER_CONTROL_TOKEN": "y"}, "--eval-every=0"},
		{[]string{"server", "--index", "0", "--peers", "a:1", "--max-pending", "0"}, map[string]string{"PACER_TOKEN": "x"}, "--max-pending=0"},
		{[]string{"export"}, nil, "--checkpoint-dir"},
		{[]string{"export", "--checkpoint-dir", "x", "--model-file", "m.pt"}, nil, "an .npz file"},
		{[]string{"eval"}, nil, "one of --checkpoint-dir and --model-file"},
		{[]string{"eval", "--checkpoint-dir", "/nonexistent-pacer-ckpt"}, nil, "no checkpoint of shard 0"},
	} {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		_, errs, code := pacer(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer %v: exit %d, stderr %q; want an error naming %q", c.args, code, errs, c.want)
		}
		for k := range c.env {
			t.Setenv(k, "")
		}
	}
}

// Values job.Config or the live package would replace by a default (or,
// for the checkpoint interval, panic on) are refused, naming the flag,
// before the server listens or the worker dials.
func TestServerAndWorkerRefuseExplicitBadValues(t *testing.T) {
	clearRoleEnv(t)
	t.Setenv("PACER_TOKEN", "x")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--workers", []string{"server", "--index", "0", "--peers", "a:1", "--workers", "0"}},
		{"--shards", []string{"server", "--index", "0", "--peers", "a:1", "--shards", "0"}},
		{"--seed", []string{"server", "--index", "0", "--peers", "a:1", "--seed", "0"}},
		{"epochs", []string{"server", "--index", "0", "--peers", "a:1", "--epochs", "0"}},
		{"momentum", []string{"server", "--index", "0", "--peers", "a:1", "--momentum", "-0.1"}},
		{"--checkpoint-interval", []string{"server", "--index", "0", "--peers", "a:1", "--checkpoint-interval", "0s"}},
		{"--checkpoint-interval", []string{"server", "--index", "0", "--peers", "a:1", "--checkpoint-interval", "-1m"}},
		{"--connect-timeout", []string{"worker", "--coordinator", "127.0.0.1:1", "--connect-timeout", "-1s"}},
		{"--connect-timeout", []string{"worker", "--coordinator", "127.0.0.1:1", "--connect-timeout", "0s"}},
	} {
		stdout, errs, code := pacer(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) || strings.Contains(stdout, "listening") {
			t.Errorf("pacer %v: exit %d, stdout %q, stderr %.300q; want an error naming %q", c.args, code, stdout, errs, c.want)
		}
	}
}

// TestWorkerFromTFConfig: `pacer worker` with nothing but TF_CONFIG (a
// TFJob-shaped value) and PACER_TOKEN finds its coordinator (ps[0]) and its
// id (chief first, so worker index 0 is id 1), and trains the job to its end.
func TestWorkerFromTFConfig(t *testing.T) {
	clearRoleEnv(t)
	sv, addr := serveOneShard(t, "asp", 2, wire.TCP{})

	t.Setenv("PACER_TOKEN", "tok")
	t.Setenv("TF_CONFIG", fmt.Sprintf(`{"cluster":{"ps":[%q],"chief":["c:2222"],"worker":["w0:2222"]},"task":{"type":"worker","index":0}}`, addr))
	out, errs, code := pacer(t, "worker", "--log-level", "warn")
	if code != 0 {
		t.Fatalf("pacer worker: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "worker 1 done") {
		t.Errorf("output %q, want worker 1 (chief first) done", out)
	}
	if st := sv.Coordinator().Stats(); st.Pushes < 10 || st.WorkerPushes[1] != st.Pushes {
		t.Errorf("coordinator counted %d pushes, worker 1 %v", st.Pushes, st.WorkerPushes)
	}
}

// serveOneShard serves a one-shard job of spec for k workers on 640
// synthetic samples (token "tok") over tr until the test ends.
func serveOneShard(t *testing.T, spec string, k int, tr wire.TCP) (*live.Server, string) {
	t.Helper()
	sp, err := paradigm.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	j := job.Config{Spec: sp, Workers: k, Shards: 1, Model: "mlp", Dataset: "synthetic", TrainLimit: 640, Epochs: 1,
		Batch: 64, HeartbeatTimeout: 5 * time.Second}
	if err := j.Fill(); err != nil {
		t.Fatal(err)
	}
	ln, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	sv, err := live.NewServer(live.ServerConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: j, TrainN: 640},
		Listener: ln, Transport: tr, Token: "tok", ControlToken: "ctl", ShardAddrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return sv, addr
}
