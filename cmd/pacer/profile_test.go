package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/profile"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// Issue 12, item 3: pacer profile on a live job with injected speeds 1, 1,
// 2.5 and jitter 0.1 fits a scenario from it, and pacer advise runs end to
// end on it. How closely the fit recovers the timing that drew the
// iterations is TestFitRecoversTiming's (profile/), on drawn times: here
// the times are a live job's, and on a machine loaded past its cores the
// workers' sleeps overshoot and read as jitter, and as speeds nearer 1, by
// as much as the load makes them (at load 24: jitter 0.29 for 0.1, the
// slow worker 2.04 for 2.5). What holds at any load is checked: three
// workers fitted, the slow one the slowest. The fit is logged with the
// load-free figures beside it.
func TestProfileAndAdviseLiveJob(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job")
	// 40 ms iterations: room for a loaded machine's real step (an MLP
	// batch, a few ms) below every drawn iteration time.
	args := []string{"train", "--mode", "inproc", "--paradigm", "asp", "--workers", "3", "--speeds", "1,1,2.5", "--jitter", "0.1",
		"--base", "40ms", "--dataset", "synthetic", "--epochs", "2", "--out", job}
	if _, errs, code := pacer(t, args...); code != 0 {
		t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
	}
	sum := filepath.Join(job, "summary.json")
	yml := filepath.Join(dir, "cluster.yaml")
	out, errs, code := pacer(t, "profile", "--summary", sum, "--out", yml)
	if code != 0 {
		t.Fatalf("profile: exit %d: %s", code, errs)
	}
	sc, err := scenario.Load(yml)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("injected speeds [1 1 2.5] jitter 0.1; fitted speeds %v jitter %.3f\n%s", sc.Speeds, sc.Jitter, out)
	if sc.Workers != 3 || len(sc.Speeds) != 3 {
		t.Fatalf("profiled scenario %+v: want 3 workers with speeds", sc)
	}
	if sc.Speeds[2] <= sc.Speeds[0] || sc.Speeds[2] <= sc.Speeds[1] {
		t.Errorf("fitted speeds %v: want worker 2 (injected 2.5× slower) the slowest", sc.Speeds)
	}
	if len(sc.Paradigms) < 5 || sc.Model != "mlp" {
		t.Errorf("paradigms %v, model %q", sc.Paradigms, sc.Model)
	}

	adv := filepath.Join(dir, "advice")
	out, errs, code = pacer(t, "advise", "--summary", sum, "--out", adv, "--seeds", "2", "--epochs", "1", "--dataset", "synthetic")
	if code != 0 {
		t.Fatalf("advise: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "fitted: base") || !(strings.Contains(out, "No clear winner") || strings.Contains(out, " wins")) {
		t.Errorf("advise printed no fit or no verdict:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(adv, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s compare.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Paradigms) != len(sc.Paradigms) || s.Mode != "virtual" || len(s.Seeds) != 2 || s.Scenario.Workers != 3 {
		t.Errorf("advise's comparison: %d paradigms, mode %s, seeds %v, workers %d", len(s.Paradigms), s.Mode, s.Seeds, s.Scenario.Workers)
	}
	if _, err := os.Stat(filepath.Join(adv, "scenario.yaml")); err != nil {
		t.Errorf("advise wrote no scenario.yaml: %v", err)
	}
}

// profile reads live runs only, from one source.
func TestProfileRefuses(t *testing.T) {
	dir := t.TempDir()
	virt := filepath.Join(dir, "virt")
	if _, errs, code := pacer(t, "train", "--paradigm", "bsp", "--workers", "2", "--dataset", "synthetic", "--epochs", "1", "--out", virt); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"live runs", []string{"profile", "--summary", filepath.Join(virt, "summary.json")}},
		{"--summary", []string{"profile"}},
		{"--summary", []string{"profile", "--summary", "x.json", "--coordinator", "127.0.0.1:1"}},
		{"--summary", []string{"profile", "--summary", filepath.Join(dir, "none.json")}},
		{"--mode", []string{"advise", "--summary", "x.json", "--mode", "sim"}},
		{"--tls", []string{"profile", "--summary", filepath.Join(virt, "summary.json"), "--tls-ca", "ca.pem"}},
	} {
		_, errs, code := pacer(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer %v: exit %d, %q; want an error naming %q", c.args, code, errs, c.want)
		}
	}
}

// pacer profile --coordinator reads a running job's iteration times from
// its shard 0.
func TestProfileRunningJob(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("PACER_TOKEN", "job-secret")
	t.Setenv("PACER_CONTROL_TOKEN", "control-secret")
	dir := t.TempDir()
	// Over TLS, as a job across machines runs: profile dials as its
	// workers do.
	cert, key := selfSigned(t, dir)
	type result struct {
		code int
		errs string
	}
	srv, wrk := make(chan result, 1), make(chan result, 1)
	go func() {
		_, errs, code := pacer(t, "server", "--index", "0", "--peers", addr, "--listen", addr, "--workers", "1", "--paradigm", "asp",
			"--dataset", "synthetic", "--train-limit", "2000", "--epochs", "1000", "--batch", "32", "--eval-every", "500", "--exit-when-done", "--out", filepath.Join(dir, "out"),
			"--tls-cert", cert, "--tls-key", key, "--tls-ca", cert)
		srv <- result{code, errs}
	}()
	go func() {
		_, errs, code := pacer(t, "worker", "--coordinator", addr, "--id", "0", "--connect-timeout", "30s", "--tls-ca", cert)
		wrk <- result{code, errs}
	}()
	yml := filepath.Join(dir, "running.yaml")
	t0 := time.Now()
	var out, errs string
	code := -1
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && code != 0 {
		// Until the worker has pushed the iterations a fit needs.
		time.Sleep(200 * time.Millisecond)
		out, errs, code = pacer(t, "profile", "--coordinator", addr, "--out", yml, "--tls-ca", cert)
	}
	t.Logf("profile answered after %s", time.Since(t0))
	// The job would run for minutes: stop it, as an operator would.
	tf := tlsFlags{ca: cert}
	tr, err := tf.transport(roles.Env{}, false)
	if err != nil {
		t.Fatal(err)
	}
	o := proto.NewObserver(tr, addr, 0, "job-secret", "control-secret")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := o.Stop(ctx); err != nil {
		t.Errorf("stopping the job: %v", err)
	}
	cancel()
	o.Close()
	for _, c := range []chan result{srv, wrk} {
		select {
		case r := <-c:
			if r.code != 0 {
				t.Errorf("a process of the job exited %d: %s", r.code, r.errs)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("the job did not end within a minute")
		}
	}
	t.Logf("the job ended after %s", time.Since(t0))
	if code != 0 {
		t.Fatalf("profile --coordinator never succeeded: exit %d: %s", code, errs)
	}
	sc, err := scenario.Load(yml)
	if err != nil || sc.Workers != 1 || len(sc.Speeds) != 1 || sc.Speeds[0] != 1 || !strings.Contains(out, "fitted: base") {
		t.Errorf("profile of the running job: %v, %+v\n%s", err, sc, out)
	}
}

// Issue 12: pacer profile fits server delays. A live job whose shard 1
// holds every pull reply 8 ms and both shards one in ten a further 300 ms
// (--server-delay) is profiled: shard 1's const delay at least the 8 ms
// injected and shard 0's below it, each shard's spike at least 85% of
// 300 ms and its probability within [0.05, 0.2]; the scenario written
// holds them, and compare runs it. Each bound that a busy machine can
// move is one-sided (a held reply is never shorter than its hold; a
// loaded timer's overshoot only lengthens it) or far beyond the heaviest
// load seen: at load 30 this machine's 8 ms timers ran up to 50 ms late,
// so the const must stay under 60 ms and the spike under 400 ms (a fit
// that merged the two would break both). The spike is long beside the
// 8 ms for that reason: an 80 ms spike merged into that continuum.
func TestProfileServerDelays(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job")
	args := []string{"train", "--mode", "inproc", "--paradigm", "asp", "--workers", "2", "--shards", "2", "--jitter", "0.05",
		"--base", "100ms", "--server-delay", "const:delay=8ms,shard=1+spike:p=0.1,delay=300ms",
		"--dataset", "synthetic", "--train-limit", "6400", "--batch", "32", "--epochs", "1", "--out", job}
	if _, errs, code := pacer(t, args...); code != 0 {
		t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
	}
	yml := filepath.Join(dir, "cluster.yaml")
	out, errs, code := pacer(t, "profile", "--summary", filepath.Join(job, "summary.json"), "--out", yml)
	if code != 0 {
		t.Fatalf("profile: exit %d: %s", code, errs)
	}
	t.Logf("\n%s", out)
	b, err := os.ReadFile(filepath.Join(job, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r runstats.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	f, err := profile.FromRun(&r)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Servers) != 2 {
		t.Fatalf("server delays %+v: want one per shard", f.Servers)
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 }
	c1, c0 := ms(f.Servers[1].Const), ms(f.Servers[0].Const)
	if c1 < 8 || c1 > 60 {
		t.Errorf("shard 1's const delay %.2f ms, want the 8 ms injected (under 60 ms at any load)", c1)
	}
	if c0 >= c1 {
		t.Errorf("shard 0's const delay %.2f ms, want below shard 1's %.2f ms (shard 0 holds no reply)", c0, c1)
	}
	for i, d := range f.Servers {
		if s := ms(d.Spike); s < 0.85*300 || s > 400 || d.SpikeP < 0.05 || d.SpikeP > 0.2 {
			t.Errorf("shard %d: spike %v at p=%g, want 300ms (255–400 ms at any load) at p=0.1 (0.05–0.2)", i, d.Spike, d.SpikeP)
		}
	}
	sc, err := scenario.Load(yml)
	if err != nil {
		t.Fatal(err)
	}
	if sc.ServerDelay != profile.ServerSpec(f.Servers) || !strings.Contains(sc.ServerDelay, "shard=1") {
		t.Errorf("the scenario's server delay %q, the fit's %q", sc.ServerDelay, profile.ServerSpec(f.Servers))
	}
	if _, errs, code := pacer(t, "compare", "--scenario", yml, "--mode", "sim", "--paradigms", "asp", "--seeds", "1", "--iterations", "20",
		"--out", filepath.Join(dir, "cmp")); code != 0 {
		t.Errorf("compare on the profiled scenario: exit %d: %s", code, errs)
	}
}
