package compare

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
)

// A group races as one paradigm: one row, one candidate, one standing; each
// of its runs is the average of its members' runs of that seed, which are
// the very runs the members give on their own, and summary.json keeps them.
func TestGroupRacesAsOne(t *testing.T) {
	g, err := paradigm.ParseGroup("avg(ssp:s=1..2)")
	if err != nil {
		t.Fatal(err)
	}
	c := simRace(t, 2, "bsp", "asp")
	c.Groups = []paradigm.Group{g}
	s, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	name := g.String()
	if len(s.Paradigms) != 3 || s.Paradigms[2].Paradigm != name {
		t.Fatalf("rows %v, want bsp, asp and %s", s.Paradigms, name)
	}
	seeds := 0
	for _, st := range s.Race.Standings {
		if st.Paradigm == name {
			seeds = st.Seeds
		}
	}
	if seeds == 0 || len(s.Race.Standings) != 3 {
		t.Fatalf("standings %+v: the group is not one candidate", s.Race.Standings)
	}
	if len(s.GroupRuns) != 2*seeds {
		t.Errorf("%d member runs kept, want %d", len(s.GroupRuns), 2*seeds)
	}
	alone := simRace(t, 2, "ssp:s=1", "ssp:s=2")
	alone.Race, alone.Seeds = nil, seeds
	sa, err := Run(context.Background(), alone)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]runstats.Run{}
	for _, r := range sa.Runs {
		byKey[r.Paradigm+"/"+fmt.Sprint(r.Seed)] = r
	}
	n := 0
	for _, r := range s.Runs {
		if r.Paradigm != name {
			continue
		}
		n++
		a, b := byKey["ssp:s=1/"+fmt.Sprint(r.Seed)], byKey["ssp:s=2/"+fmt.Sprint(r.Seed)]
		if a.Pushes == 0 || b.Pushes == 0 {
			t.Fatalf("seed %d: no run alone", r.Seed)
		}
		if want := (a.Throughput + b.Throughput) / 2; math.Abs(r.Throughput-want) > 1e-12 {
			t.Errorf("seed %d: the group's throughput %g, want the members' mean %g", r.Seed, r.Throughput, want)
		}
		if r.StalenessMax != max(a.StalenessMax, b.StalenessMax) {
			t.Errorf("seed %d: staleness max %d", r.Seed, r.StalenessMax)
		}
	}
	if n != seeds {
		t.Errorf("%d runs of the group, the race says %d seeds", n, seeds)
	}
	for _, p := range Effective(&c).Paradigms {
		if p == name {
			return
		}
	}
	t.Errorf("the recorded scenario's paradigms %v miss the group", Effective(&c).Paradigms)
}

// A group trains every member on each seed: the live modes, which run in
// real time, refuse it before anything runs.
func TestGroupRefusedLive(t *testing.T) {
	g, err := paradigm.ParseGroup("avg(ssp:s=1|ssp:s=2)")
	if err != nil {
		t.Fatal(err)
	}
	c := simRace(t, 1, "bsp")
	c.Mode, c.Race, c.Seeds, c.Groups = runstats.Inproc, nil, 1, []paradigm.Group{g}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "deterministic modes") {
		t.Errorf("validate: %v", err)
	}
}
