package worker

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
)

// waitGuard bounds every wait of these tests for an event: a guard
// against a hang on a busy machine, never a wait for its own sake.
const waitGuard = 2 * time.Minute

// quickJob is a small synthetic job of spec with k workers and s shards
// (package live's tests have the same one).
func quickJob(t testing.TB, spec string, k, s int) job.Config {
	sp, err := paradigm.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return job.Config{Spec: sp, Workers: k, Shards: s, Model: "mlp", Dataset: "synthetic", Epochs: 2, Batch: 32,
		LR: 0.1, Momentum: -1, HeartbeatTimeout: time.Second, EvalEvery: 0.5}
}

// syncBuffer is a log destination several goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
