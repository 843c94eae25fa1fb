package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/runstats"
)

// A live job whose context ends (Ctrl-C in pacer train) returns what was
// measured so far: ErrInterrupted with a summary marked interrupted whose
// curve holds the evaluations made, plus one of the weights where it
// stopped.
func TestInterruptKeepsSummaryInproc(t *testing.T) {
	cfg := quickJob(t, "asp", 2, 2)
	cfg.Epochs, cfg.EvalEvery = 1000, 0.25 // runs until interrupted
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evals := 0
	opt := Options{Data: synth(t), Timeout: 120 * time.Second}
	t0 := time.Now()
	var stopped time.Time
	res, err := TrainResult(ctx, cfg, opt, func(p runstats.Progress) {
		if evals++; evals == 2 {
			stopped = time.Now()
			cancel()
		}
	})
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrInterrupted (context canceled)", err)
	}
	if res == nil || res.Run == nil {
		t.Fatal("no summary kept")
	}
	r := res.Run
	t.Logf("interrupted after %s: %d pushes, curve %v, stop took %s", stopped.Sub(t0).Round(time.Millisecond), r.Pushes, r.Curve, time.Since(stopped).Round(time.Millisecond))
	if !r.Interrupted || r.Pushes == 0 || r.Updates == 0 || len(r.Curve) < 3 || r.Mode != "inproc" || len(r.WorkerPushes) != 2 {
		t.Errorf("summary %+v: want interrupted, pushes and updates, ≥ 3 evaluations", r)
	}
	if r.FinalAccuracy != r.Curve[len(r.Curve)-1][1] || r.Seconds <= 0 {
		t.Errorf("final accuracy %g, seconds %g, curve %v", r.FinalAccuracy, r.Seconds, r.Curve)
	}
}

// Ctrl-C at a terminal (SIGINT to the whole foreground process group) of
// pacer train --mode tcp: the command writes summary.json with the curve
// so far, marked interrupted, the shards write their final checkpoints,
// and it exits 1 within moments.
func TestCtrlCKeepsSummaryTCP(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	out, ck := filepath.Join(dir, "out"), filepath.Join(dir, "ckpt")
	cmd := exec.Command(pacerBin, "train", "--mode", "tcp", "--paradigm", "asp", "--workers", "2", "--shards", "2",
		"--dataset", "synthetic", "--train-limit", "2000", "--test-limit", "500", "--epochs", "1000", "--eval-every", "0.25",
		"--checkpoint-dir", ck, "--out", out)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's foreground group of its own
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever is left of the group
	}()
	var log []string
	evals := 0
	deadline := time.After(90 * time.Second) // a guard: the evaluations come by themselves
	for evals < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("pacer train ended before two evaluations:\n%s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			if strings.Contains(l, "test accuracy") {
				evals++
			}
		case <-deadline:
			t.Fatalf("no two evaluations within 90 s:\n%s", strings.Join(log, "\n"))
		}
	}
	t0 := time.Now()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second): // a guard: Ctrl-C ends it
		t.Fatal("pacer train still running 60 s after Ctrl-C")
	}
	t.Logf("exited %v after %s; stdout:\n%s", err, time.Since(t0).Round(time.Millisecond), stdout.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("no summary.json after Ctrl-C: %v", err)
	}
	var r runstats.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("curve %v", r.Curve)
	if !r.Interrupted || r.Pushes == 0 || len(r.Curve) < 2 || r.Mode != "tcp" {
		t.Errorf("summary after Ctrl-C: interrupted %v, pushes %d, curve %v, mode %s", r.Interrupted, r.Pushes, r.Curve, r.Mode)
	}
	if !strings.Contains(stdout.String(), "interrupted after") {
		t.Errorf("stdout does not say it was interrupted:\n%s", stdout.String())
	}
	for i := 0; i < 2; i++ {
		if _, err := os.Stat(ckpt.Path(ck, i)); err != nil {
			t.Errorf("shard %d wrote no final checkpoint: %v", i, err)
		}
	}
}
