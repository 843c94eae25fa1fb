package sim

import (
	"github.com/pacer-ps/pacer/timing"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// versionLearner follows, outside the simulator, which version of each shard
// every gradient was computed from, and checks each apply's staleness
// against it: staleness = shard version at the apply − version read.
type versionLearner struct {
	t      *testing.T
	spec   string
	ver    []uint64   // each shard's version
	staged [][]uint64 // version in flight to each worker, per shard
	copyV  [][]uint64 // version each worker holds, per shard
	readAt map[uint64][]uint64
	nextID uint64
	bad    int
	checks int
}

func newVersionLearner(t *testing.T, spec string, workers, shards int) *versionLearner {
	l := &versionLearner{t: t, spec: spec, ver: make([]uint64, shards), readAt: map[uint64][]uint64{}}
	for p := 0; p < workers; p++ {
		l.staged = append(l.staged, make([]uint64, shards))
		l.copyV = append(l.copyV, make([]uint64, shards))
	}
	return l
}

func (l *versionLearner) Serve(now time.Duration, p, i int) { l.staged[p][i] = l.ver[i] }
func (l *versionLearner) Deliver(now time.Duration, p, i int) {
	l.copyV[p][i] = l.staged[p][i]
}
func (l *versionLearner) Compute(now time.Duration, p int) uint64 {
	l.nextID++
	l.readAt[l.nextID] = append([]uint64(nil), l.copyV[p]...)
	return l.nextID
}
func (l *versionLearner) Apply(now time.Duration, i int, a paradigm.Apply) {
	for _, c := range a.Grads {
		want := int64(l.ver[i]) - int64(l.readAt[c.ID][i])
		l.checks++
		if c.Staleness != want {
			if l.bad++; l.bad <= 3 {
				l.t.Errorf("%s: shard %d at version %d: worker %d's gradient reported staleness %d, computed from version %d (staleness %d)",
					l.spec, i, l.ver[i], c.Worker, c.Staleness, l.readAt[c.ID][i], want)
			}
		}
	}
	l.ver[i] = a.Version
}
func (l *versionLearner) Drop(now time.Duration, i int, id uint64) {}

// Issue 9 (b): under PSP a pull answer may land while the worker computes
// (partial pull: it started on the fresh blocks). That answer refreshes the
// copy for the next iteration, but the gradient in flight was computed from
// the older block and must be tagged with it; tagging it with the newer
// version under-reported PSP's staleness. Every other paradigm is held to
// the same definition.
func TestStalenessIsOfTheVersionComputedFrom(t *testing.T) {
	for _, s := range []string{"psp:c=3,b=0.5", "psp:c=4,b=0.5,t1=100ms,t2=50ms", "asp", "ssp:s=2",
		"dssp:sl=1,su=8", "softsync:n=2", "backup:b=1", "elastic:r=6", "elastic:r=6,apply=local", "delay:d=2"} {
		for seed := uint64(1); seed <= 20; seed++ {
			cfg := scenario(seed, s)
			cfg.Shards = 4
			cfg.ServerDelay = timing.MustServerDelay("spike:p=0.1,delay=2s")
			cfg.Failures = nil
			cfg.Workers = max(cfg.Workers, 4)
			l := newVersionLearner(t, s, cfg.Workers, cfg.Shards)
			cfg.Learner = l
			if _, err := Run(cfg); err != nil {
				t.Fatalf("%s seed %d: %v", s, seed, err)
			}
			if l.checks == 0 {
				t.Fatalf("%s seed %d: nothing applied", s, seed)
			}
			if l.bad > 0 {
				t.Fatalf("%s seed %d: %d of %d contributions reported a wrong staleness", s, seed, l.bad, l.checks)
			}
		}
	}
}
