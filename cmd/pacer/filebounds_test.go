package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// peakRSS runs pacer with args and env and returns its peak resident set
// in KiB and its stderr. With until set, the process is a server: it is
// stopped (SIGTERM) once its stdout says it listens, and its peak then is
// what it took to start.
func peakRSS(t *testing.T, env []string, until string, args ...string) (int64, string) {
	t.Helper()
	cmd := exec.Command(pacerBin(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			if until != "" && !seen && strings.Contains(sc.Text(), until) {
				seen = true
				listening <- true
			}
		}
		if !seen {
			listening <- false
		}
	}()
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	if until != "" {
		if !<-listening {
			cmd.Wait()
			t.Fatalf("pacer %s never said %q:\n%s", strings.Join(args, " "), until, errb.String())
		}
		cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.Wait()
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, errb.String()
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// Issue 37 point 7: a file pacer reads is refused from its size and
// headers, so the refusal's peak memory is at most twice the same
// command's on a valid minimal file (its idle RSS), never the file's
// size. The files are sparse: 1 GiB each, with no blocks on disk.
func TestFileRefusalsPeakMemory(t *testing.T) {
	dir := t.TempDir()
	flat10 := filepath.Join(dir, "flat10.npz")
	if err := modelfile.WriteFlat(flat10, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.npz")
	sparse(t, big, 1<<30)

	// pacer server --init.
	env := []string{"PACER_TOKEN=file-bounds-secret", "PACER_CONTROL_TOKEN=file-bounds-control"}
	server := func(init string) []string {
		addr := "127.0.0.1:" + freePort(t)
		return []string{"server", "--index", "0", "--peers", addr, "--listen", addr, "--workers", "2",
			"--model", "flat:n=10", "--dataset", "synthetic", "--init", init}
	}
	idle, errs := peakRSS(t, env, "listening", server(flat10)...)
	rss, errs2 := peakRSS(t, env, "", server(big)...)
	t.Logf("server --init: idle %d KiB, refusal %d KiB: %s", idle, rss, strings.TrimSpace(errs2))
	if !strings.Contains(errs2, big) || !strings.Contains(errs2, "1073741824 bytes") {
		t.Errorf("server --init of a 1 GiB file: %q, want a refusal naming it and its size (idle run: %s)", errs2, errs)
	}
	if rss > 2*idle {
		t.Errorf("server --init: the refusal peaked at %d KiB, more than twice the idle %d KiB", rss, idle)
	}

	// pacer eval --model-file: the valid minimal file is pacer's smallest model.
	m, err := nn.New("cifar-net", nn.Image28)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float32, m.NumParams())
	m.Init(p, 1)
	small := filepath.Join(dir, "small.npz")
	if err := modelfile.WriteNPZ(small, &modelfile.Model{Model: m, Params: p}); err != nil {
		t.Fatal(err)
	}
	eval := []string{"eval", "--dataset", "synthetic", "--test-limit", "100"}
	idle, errs = peakRSS(t, nil, "", append(eval, "--model-file", small)...)
	rss, errs2 = peakRSS(t, nil, "", append(eval, "--model-file", big)...)
	t.Logf("eval --model-file: idle %d KiB, refusal %d KiB: %s", idle, rss, strings.TrimSpace(errs2))
	if !strings.Contains(errs2, big) || !strings.Contains(errs2, "1073741824 bytes") {
		t.Errorf("eval --model-file of a 1 GiB file: %q, want a refusal naming it and its size (idle run: %s)", errs2, errs)
	}
	if rss > 2*idle {
		t.Errorf("eval --model-file: the refusal peaked at %d KiB, more than twice the idle %d KiB", rss, idle)
	}

	// pacer eval --checkpoint-dir: a flat job's checkpoint of 2^28
	// parameters, its size the header's (sparse), against a valid one of
	// the same model of 10.
	valid := t.TempDir()
	st := &ckpt.State{Meta: ckpt.Meta{Shard: 0, Shards: 1, Lo: 0, Hi: 10, NumParams: 10, Paradigm: "bsp", Model: nn.FlatName(10)}, Weights: make([]float32, 10)}
	if _, err := ckpt.Write(valid, st); err != nil {
		t.Fatal(err)
	}
	ckDir := func(n int) string {
		d := t.TempDir()
		hdr, err := json.Marshal(ckpt.Meta{Shard: 0, Shards: 1, Lo: 0, Hi: n, NumParams: n, Model: nn.FlatName(n), Paradigm: "bsp"})
		if err != nil {
			t.Fatal(err)
		}
		b := append([]byte("PACERCK1"), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(hdr)))
		b = append(b, hdr...)
		path := ckpt.Path(d, 0)
		sparse(t, path, int64(len(b))+4*int64(n)+4)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		return d
	}
	idle, errs = peakRSS(t, nil, "", append(eval, "--checkpoint-dir", valid)...)
	rss, errs2 = peakRSS(t, nil, "", append(eval, "--checkpoint-dir", ckDir(nn.MaxFlat))...)
	t.Logf("eval --checkpoint-dir: idle %d KiB, refusal %d KiB: %s", idle, rss, strings.TrimSpace(errs2))
	if !strings.Contains(errs2, "is not pacer's") {
		t.Errorf("eval --checkpoint-dir of a flat job: %q, want a refusal saying it is not pacer's (idle run: %s)", errs2, errs)
	}
	if rss > 2*idle {
		t.Errorf("eval --checkpoint-dir: the refusal peaked at %d KiB, more than twice the idle %d KiB", rss, idle)
	}
}

// Issue 37: the whole files the command line reads (a run's summary for
// pacer profile, a --tls-ca bundle) are checked against their stat size
// before they are read: a sparse one a byte above its limit is refused by
// its size (filecap.TooLarge, not read first), naming it.
func TestWholeFilesBounded(t *testing.T) {
	dir := t.TempDir()
	big := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		sparse(t, p, size)
		return p
	}
	check := func(what string, err error, path string, size int64) {
		t.Helper()
		var tl *filecap.TooLarge
		if !errors.As(err, &tl) || tl.Unsized || tl.Path != path || tl.Size != size {
			t.Errorf("%s of a sparse file a byte above its limit: %v; want it refused by its stat size", what, err)
		}
	}
	sum := big("summary.json", maxSummaryBytes+1)
	_, _, _, err := (&profileSource{summary: sum}).fit()
	check("profile --summary", err, sum, maxSummaryBytes+1)

	ca := big("ca.pem", maxCABytes+1)
	_, err = (&tlsFlags{ca: ca}).transport(roles.Env{Getenv: func(string) string { return "" }}, false)
	check("--tls-ca", err, ca, maxCABytes+1)
}

// Issue 37: the peak memory of pacer profile refusing a sparse summary
// above its limit is at most twice the same command's on a valid minimal
// summary (its idle RSS), never the file's size. (A child's peak counts
// the test process's own until its exec: run alone, or after tests that
// do not grow it.)
func TestSummaryRefusalPeakMemory(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	r := runstats.Run{Paradigm: "asp", Mode: "inproc", Workers: 2, Shards: 1,
		WorkerIterations: []runstats.IterStats{{N: 100, Mean: 0.01, LogMean: math.Log(0.01), LogSD: 0.1}, {N: 100, Mean: 0.02, LogMean: math.Log(0.02), LogSD: 0.1}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, b, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	sparse(t, big, maxSummaryBytes+1)
	out := filepath.Join(dir, "cluster.yaml")
	idle, errs := peakRSS(t, nil, "", "profile", "--summary", small, "--out", out)
	rss, errs2 := peakRSS(t, nil, "", "profile", "--summary", big, "--out", out)
	t.Logf("profile --summary: idle %d KiB, refusal %d KiB: %s", idle, rss, strings.TrimSpace(errs2))
	if !strings.Contains(errs2, big) || !strings.Contains(errs2, strconv.Itoa(maxSummaryBytes+1)+" bytes") {
		t.Errorf("profile --summary of a sparse file above the limit: %q, want a refusal naming it and its size (idle run: %s)", errs2, errs)
	}
	if rss > 2*idle {
		t.Errorf("profile --summary: the refusal peaked at %d KiB, more than twice the idle %d KiB", rss, idle)
	}
}
