package live

import (
	"time"

	"fmt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pacerBin is the pacer binary the tcp-mode tests launch, built once.
var pacerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pacer-live-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pacerBin = filepath.Join(dir, "pacer")
	build := exec.Command("go", "build", "-o", pacerBin, "github.com/pacer-ps/pacer/cmd/pacer")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pacer:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quickJob is a small synthetic job of spec with k workers and s shards.
func quickJob(t testing.TB, spec string, k, s int) job.Config {
	sp, err := paradigm.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return job.Config{Spec: sp, Workers: k, Shards: s, Model: "mlp", Dataset: "synthetic", Epochs: 2, Batch: 32,
		LR: 0.1, Momentum: -1, HeartbeatTimeout: time.Second, EvalEvery: 0.5}
}

// childEnv is env without the tokens, so a server a test starts gets only
// the ones the test gives it (the launcher's own copy is in package launch).
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PACER_TOKEN=") && !strings.HasPrefix(kv, "PACER_CONTROL_TOKEN=") {
			out = append(out, kv)
		}
	}
	return out
}
