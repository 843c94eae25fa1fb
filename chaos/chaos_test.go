package chaos

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testConfig(t *testing.T) Config {
	t.Helper()
	c := Config{Seed: 7, Runs: 80, Binary: "pacer"}
	if err := c.fill(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestScheduleReplays: a run's schedule is drawn from (seed, index) alone,
// so --from i --runs 1 replays it; another seed draws another.
func TestScheduleReplays(t *testing.T) {
	c := testConfig(t)
	other := c
	other.Seed = 8
	differs := 0
	for i := range 80 {
		p1, k1, f1 := c.Schedule(i)
		p2, k2, f2 := c.Schedule(i)
		if p1 != p2 || k1 != k2 || !reflect.DeepEqual(f1, f2) {
			t.Fatalf("run %d: two draws differ: %v vs %v", i, f1, f2)
		}
		if _, _, f3 := other.Schedule(i); !reflect.DeepEqual(f1, f3) {
			differs++
		}
	}
	if differs < 40 {
		t.Errorf("seed 8 drew the same schedule as seed 7 in %d of 80 runs", 80-differs)
	}
}

// TestScheduleCoversAndStaysInTheJob: 63 runs (paradigms × kinds) cover
// every paradigm × kind once, and every fault names a process of the job, mid-job, with the
// restart its kind says.
func TestScheduleCoversAndStaysInTheJob(t *testing.T) {
	c := testConfig(t)
	seen := map[[2]string]int{}
	for i := range len(Paradigms) * len(Kinds) {
		p, k, fs := c.Schedule(i)
		seen[[2]string{p, k}]++
		want := 1
		if k == "mixed" {
			want = 2
		}
		if len(fs) != want {
			t.Fatalf("run %d (%s): %d faults", i, k, len(fs))
		}
		for _, f := range fs {
			if f.AtPushes < int64(c.Pushes)/10 || f.AtPushes > int64(c.Pushes)*7/10 {
				t.Errorf("run %d: fault at push %d of %d", i, f.AtPushes, c.Pushes)
			}
			switch {
			case f.Role == "worker" && (f.Index < 0 || f.Index >= c.Workers),
				f.Role == "shard" && (f.Index < 0 || f.Index >= c.Shards || f.Restart == (f.Stop > 0)),
				f.Duplicate && (f.Role != "worker" || f.Restart),
				f.Role != "worker" && f.Role != "shard":
				t.Errorf("run %d: %+v", i, f)
			}
			if k == "coord-restart" && f.Index != 0 || k == "shard-restart" && f.Index == 0 || k == "worker" && f.Restart ||
				k == "shard-stop" && (f.Index == 0 || f.Stop != c.StopFor) || k == "dup-id" && !f.Duplicate {
				t.Errorf("run %d (%s): %+v", i, k, f)
			}
		}
		if k == "mixed" && fs[0].Role == fs[1].Role && fs[0].Index == fs[1].Index {
			t.Errorf("run %d: both faults hit %s %d", i, fs[0].Role, fs[0].Index)
		}
	}
	if len(seen) != len(Paradigms)*len(Kinds) {
		t.Errorf("%d runs cover %d paradigm × kind pairs, want every one of them", len(Paradigms)*len(Kinds), len(seen))
	}
}

// TestParadigmsRestricted: --paradigms bsp makes every run a BSP run with
// the same fault draws as the full suite's run of that index, and its
// replay command names the paradigm.
func TestParadigmsRestricted(t *testing.T) {
	all, only := testConfig(t), testConfig(t)
	only.Paradigms = []string{"bsp"}
	if err := only.fill(); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		p, k, fs := only.Schedule(i)
		_, k2, fs2 := all.Schedule(i)
		if p != "bsp" || k != k2 || !reflect.DeepEqual(fs, fs2) {
			t.Errorf("run %d: %s %s %+v, the full suite's: %s %+v", i, p, k, fs, k2, fs2)
		}
	}
	r := Run{Index: 3, Seed: only.Seed, Paradigm: "bsp", Kind: "worker"}
	if cmd := r.Replay(only); !strings.HasSuffix(cmd, " --paradigms bsp") {
		t.Errorf("replay %q does not name the paradigm", cmd)
	}
}

func TestBadConfigRefused(t *testing.T) {
	for _, c := range []Config{
		{Runs: 0},
		{Runs: 1, Kinds: []string{"meteor"}},
		{Runs: 1, Paradigms: []string{"bsp", "ssp:s=-1"}},
		{Runs: 1, Durability: "hope"},
		{Runs: 1, Workers: 1},
		{Runs: 1, Pushes: 10},
		{Runs: 1, Pushes: 1_000_000},
		{Runs: 1, StopFor: time.Second},                               // no longer than the heartbeat timeout
		{Runs: 1, StopFor: time.Minute},                               // as long as the run's timeout
		{Runs: 1, StopFor: 5 * time.Second, Timeout: 4 * time.Second}, // past the run's timeout
	} {
		c.Binary = "pacer"
		if err := c.fill(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestSummaryCounts: the rows add up, and a failed run is printed with its
// schedule and replay command.
func TestSummaryCounts(t *testing.T) {
	c := testConfig(t)
	runs := []Run{
		{Index: 0, Seed: 7, Paradigm: "bsp", Kind: "worker", Outcome: "finished", Seconds: 2, Pushes: 300, Target: 300},
		{Index: 8, Seed: 7, Paradigm: "bsp", Kind: "worker-rejoin", Outcome: "hang", Seconds: 30, Pushes: 120, Target: 300,
			Faults: []Fault{{Role: "worker", Index: 1, AtPushes: 90, Restart: true, After: 1500 * time.Millisecond}}},
		{Index: 17, Seed: 7, Paradigm: "asp", Kind: "shard-restart", Outcome: "finished", Seconds: 4, Lost: 12, Pushes: 320, Target: 300},
	}
	s := Summarize(c, "scripts/chaos", runs)
	if tot := s.Total; tot.Runs != 3 || tot.Finished != 2 || tot.Hangs != 1 || tot.Lost != 12 || tot.LostRuns != 1 || tot.Overrun != 1 || tot.MeanSecs != 3 || tot.MaxSecs != 4 {
		t.Errorf("total %+v", tot)
	}
	if len(s.ByParadigm) != 2 || s.ByParadigm[0].Paradigm != "bsp" || s.ByParadigm[0].Runs != 2 || len(s.ByKind) != 3 {
		t.Errorf("rows %+v / %+v", s.ByParadigm, s.ByKind)
	}
	var b bytes.Buffer
	s.Table(&b, c)
	for _, want := range []string{"run 8 (bsp, worker-rejoin): hang", "kill -9 worker 1 at push 90, restart after 1.5s",
		"scripts/chaos --seed 7 --from 8 --runs 1 --kinds worker-rejoin --durability log --pushes 300", "run 17 (asp, shard-restart): finished; lost 12"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "run 0 ") {
		t.Errorf("a clean run is listed:\n%s", b.String())
	}
}
