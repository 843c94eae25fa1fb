package sim

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// ledger is a Learner that keeps every gradient's fate: applied (with the
// weights of its applies) or dropped.
type ledger struct {
	next             uint64
	applied, dropped map[uint64]int
	rules            []string // the rules Switched named, in order
}

func (l *ledger) Switched(now time.Duration, rule paradigm.Spec) {
	l.rules = append(l.rules, rule.String())
}

func (l *ledger) Serve(now time.Duration, worker, shard int)   {}
func (l *ledger) Deliver(now time.Duration, worker, shard int) {}
func (l *ledger) Compute(now time.Duration, worker int) uint64 {
	l.next++
	return l.next
}
func (l *ledger) Apply(now time.Duration, shard int, a paradigm.Apply) {
	for _, c := range a.Grads {
		l.applied[c.ID]++
	}
}
func (l *ledger) Drop(now time.Duration, shard int, id uint64) { l.dropped[id]++ }

// scripted is a planner that switches through specs at its decisions, then stays.
func scripted(t *testing.T, specs ...string) func(time.Duration, Window, paradigm.Spec) (Plan, error) {
	i := 0
	return func(now time.Duration, w Window, cur paradigm.Spec) (Plan, error) {
		if len(w.Iter) == 0 || w.Iter[0] <= 0 {
			t.Errorf("decision at %s: window %+v", now, w)
		}
		if i >= len(specs) {
			return Plan{Best: cur.String()}, nil
		}
		sp := mustSpec(t, specs[i])
		i++
		return Plan{Switch: true, Next: sp, Best: sp.String(), Gain: 0.5}, nil
	}
}

// TestAutoSwitchLosesNothing: runs under auto that switch through
// paradigms on jittery workers, with and without a network: every
// gradient a worker pushed is applied once or dropped once, never both,
// never twice; with no backup workers among them (the one rule that
// drops by design) none is dropped: the drain flushes what BSP's and
// softsync's aggregators hold. The decisions are in the summary, and a
// run is the same bytes twice.
func TestAutoSwitchLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		script  []string
		mayDrop bool
	}{
		{[]string{"softsync:n=1", "bsp", "softsync:n=2", "asp"}, false},
		{[]string{"asp", "backup:b=1", "softsync:n=2", "asp"}, true},
	} {
		for _, netOn := range []bool{false, true} {
			autoRun(t, tc.script, tc.mayDrop, netOn)
		}
	}
}

func autoRun(t *testing.T, script []string, mayDrop, netOn bool) {
	t.Helper()
	{
		var first []byte
		for range 2 {
			l := &ledger{applied: map[uint64]int{}, dropped: map[uint64]int{}}
			arrivals := 0
			cfg := Config{Spec: mustSpec(t, "auto:every=5"), Workers: 4, Iterations: 120, Seed: 3,
				Timing:  timing.WorkerSpec{Jitter: 0.3, Straggler: timing.MustStraggler("slow:worker=3,factor=2,from=20")},
				Replan:  scripted(t, script...),
				Learner: l,
				Trace: func(ev Event) {
					if ev.Kind == Arrive {
						arrivals++
					}
				}}
			if netOn {
				cfg.Network, cfg.Params = gigNet(), nParams
			}
			r, err := Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			switches := 0
			for _, d := range r.Decisions {
				if d.Switch {
					switches++
				}
			}
			if switches != 4 || r.Paradigm != "auto:every=5" {
				t.Fatalf("network %v: %d switches in %+v (paradigm %s)", netOn, switches, r.Decisions, r.Paradigm)
			}
			// The learner is told each rule in force (its step size is
			// the rule's: an asp apply is split K ways, a bsp one not).
			if strings.Join(l.rules, ";") != strings.Join(script, ";") {
				t.Errorf("network %v: the learner was told %v, want %v", netOn, l.rules, script)
			}
			fates := 0
			for id, n := range l.applied {
				if n != 1 || l.dropped[id] > 0 {
					t.Errorf("network %v: gradient %d applied %d times, dropped %d", netOn, id, n, l.dropped[id])
				}
				fates++
			}
			for id, n := range l.dropped {
				if n != 1 {
					t.Errorf("network %v: gradient %d dropped %d times", netOn, id, n)
				}
				fates++
			}
			// The run ends under asp, which applies every push at once:
			// every gradient that reached the shard has its fate.
			if !mayDrop && len(l.dropped) > 0 {
				t.Errorf("%v, network %v: %d gradients dropped", script, netOn, len(l.dropped))
			}
			if fates != arrivals || int64(len(l.dropped)) != r.Dropped {
				t.Errorf("network %v: %d gradients reached the shard, %d applied or dropped (%d dropped, summary %d)",
					netOn, arrivals, fates, len(l.dropped), r.Dropped)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if string(b) != string(first) {
				t.Errorf("network %v: two runs of one seed differ", netOn)
			}
		}
	}
}

// TestAutoNeedsAPlanner: auto without a planner is refused before it
// starts, and a planner's error ends the run with it.
func TestAutoNeedsAPlanner(t *testing.T) {
	if _, err := Run(Config{Spec: mustSpec(t, "auto"), Workers: 2}); err == nil || !strings.Contains(err.Error(), "Replan") {
		t.Errorf("auto without Replan: %v", err)
	}
	boom := errors.New("boom")
	_, err := Run(Config{Spec: mustSpec(t, "auto:every=1"), Workers: 2, Iterations: 50,
		Replan: func(time.Duration, Window, paradigm.Spec) (Plan, error) { return Plan{}, boom }})
	if !errors.Is(err, boom) {
		t.Errorf("a planner's error: run ended with %v", err)
	}
}
