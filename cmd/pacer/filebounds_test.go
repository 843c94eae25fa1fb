package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/ckpt"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
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
