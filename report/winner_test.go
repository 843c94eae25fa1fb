package report

import (
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// trainedRun reaches acc 0.9 at time reach (a step curve), ending at final.
func trainedRun(name string, reach, final float64) runstats.Run {
	c := [][2]float64{{0, 0.1}}
	if reach > 0 {
		c = append(c, [2]float64{reach / 2, 0.5})
	}
	c = append(c, [2]float64{reach, 0.9}, [2]float64{2000, final})
	return runstats.Run{Paradigm: name, Mode: "virtual", Curve: c, FinalAccuracy: final}
}

// neverRun tops out at best without reaching 0.85.
func neverRun(name string, best float64) runstats.Run {
	return runstats.Run{Paradigm: name, Mode: "virtual", Curve: [][2]float64{{0, 0.1}, {100, best}, {2000, best - 0.01}}, FinalAccuracy: best - 0.01, BestAccuracy: best}
}

func simRun(name string, thru float64) runstats.Run {
	return runstats.Run{Paradigm: name, Mode: "sim", Throughput: thru}
}

func TestWinner(t *testing.T) {
	ttt := 300.0
	cases := []struct {
		name     string
		sc       Scenario
		runs     []runstats.Run
		want     string
		sentence string
	}{
		{"race", Scenario{Target: 0.85}, []runstats.Run{trainedRun("bsp", 865, 0.9), trainedRun("ssp:s=3", 783, 0.9), trainedRun("dssp:sl=3,su=15", 412, 0.9)},
			"dssp:sl=3,su=15", "dssp:sl=3,su=15 reached 85% test accuracy first, at 386 s — 1.9× sooner than ssp:s=3 and 2.1× sooner than bsp."},
		{"race with a run that never reaches", Scenario{Target: 0.85}, []runstats.Run{trainedRun("bsp", 800, 0.9), neverRun("asp", 0.8), trainedRun("ssp:s=3", 400, 0.9)},
			"ssp:s=3", "ssp:s=3 reached 85% test accuracy first, at 375 s — 2.0× sooner than bsp; asp never reached it."},
		{"race of many", Scenario{Target: 0.85}, []runstats.Run{trainedRun("bsp", 800, 0.9), trainedRun("asp", 200, 0.9), trainedRun("ssp:s=3", 400, 0.9),
			trainedRun("ssp:s=6", 300, 0.9), trainedRun("ssp:s=15", 260, 0.9), neverRun("backup:b=1", 0.7)},
			"asp", "asp reached 85% test accuracy first, at 188 s — 1.3× sooner than ssp:s=15, the next best, and 4.0× sooner than bsp, the last of the 4 others; backup:b=1 never reached it."},
		{"only one reaches", Scenario{Target: 0.85}, []runstats.Run{neverRun("bsp", 0.7), trainedRun("asp", 50.5, 0.9), neverRun("ssp:s=3", 0.8)},
			"asp", "asp was the only paradigm to reach 85% test accuracy, at 47.3 s; bsp and ssp:s=3 never reached it."},
		{"single run", Scenario{Target: 0.85}, []runstats.Run{trainedRun("bsp", 8.25, 0.9)},
			"bsp", "bsp reached 85% test accuracy at 7.73 s."},
		{"tie broken by final accuracy", Scenario{Target: 0.85}, []runstats.Run{trainedRun("bsp", 400, 0.88), trainedRun("asp", 400, 0.91), trainedRun("ssp:s=3", 1000, 0.9)},
			"asp", "asp and bsp tied, each reaching 85% test accuracy at 375 s — 2.5× sooner than ssp:s=3."},
		{"full tie keeps input order", Scenario{Target: 0.85}, []runstats.Run{trainedRun("ssp:s=6", 400, 0.9), trainedRun("ssp:s=3", 400, 0.9)},
			"ssp:s=6", "ssp:s=6 and ssp:s=3 tied, each reaching 85% test accuracy at 375 s."},
		{"nobody reaches", Scenario{Target: 0.95}, []runstats.Run{neverRun("bsp", 0.81), neverRun("asp", 0.83)},
			"", "No paradigm reached 95% test accuracy; the closest was asp, with a best of 83%."},
		{"target from the runs", Scenario{}, []runstats.Run{
			func() runstats.Run { r := trainedRun("bsp", 900, 0.9); r.Target = 0.85; return r }(),
			func() runstats.Run { r := trainedRun("asp", 300, 0.9); r.Target = 0.85; return r }()},
			"asp", "asp reached 85% test accuracy first, at 281 s — 3.0× sooner than bsp."},
		{"time_to_target without a curve", Scenario{Target: 0.85}, []runstats.Run{
			{Paradigm: "bsp", Mode: "tcp", Target: 0.85, TimeToTarget: &ttt, FinalAccuracy: 0.86},
			{Paradigm: "asp", Mode: "tcp", Target: 0.85, FinalAccuracy: 0.84}},
			"bsp", "bsp was the only paradigm to reach 85% test accuracy, at 300 s; asp never reached it."},
		{"reached at once", Scenario{Target: 0.05}, []runstats.Run{trainedRun("bsp", 100, 0.9), trainedRun("asp", 50, 0.9)},
			"bsp", "bsp and asp tied, each reaching 5% test accuracy at 0 s."},
		{"one at time zero", Scenario{Target: 0.45}, []runstats.Run{trainedRun("bsp", 100, 0.9), {Paradigm: "asp", Curve: [][2]float64{{0, 0.5}}}},
			"asp", "asp reached 45% test accuracy first, at 0 s — before bsp."},
		{"trained, no target: final accuracy", Scenario{}, []runstats.Run{trainedRun("bsp", 100, 0.88), trainedRun("asp", 50, 0.9)},
			"asp", "asp ended with the highest test accuracy, 90%, ahead of bsp (88%)."},
		{"sim: throughput", Scenario{Target: 0.85}, []runstats.Run{simRun("bsp", 21.5), simRun("asp", 41.2), simRun("ssp:s=3", 31.7)},
			"asp", "asp had the highest throughput, 41.2 pushes/s — 1.3× that of ssp:s=3 and 1.9× that of bsp."},
		{"sim: tie and a stalled run", Scenario{}, []runstats.Run{simRun("bsp", 0), simRun("ssp:s=3", 40), simRun("asp", 40)},
			"ssp:s=3", "ssp:s=3 and asp tied: each had the highest throughput, 40.0 pushes/s; bsp made no pushes."},
		{"sim: many runs", Scenario{}, []runstats.Run{simRun("bsp", 10), simRun("asp", 40), simRun("ssp:s=3", 30), simRun("ssp:s=6", 32), simRun("ssp:s=15", 35)},
			"asp", "asp had the highest throughput, 40.0 pushes/s — 1.1× that of ssp:s=15, the next best, and 4.0× that of bsp, the last of the 4 others."},
		{"sim: nothing ran", Scenario{}, []runstats.Run{simRun("bsp", 0), simRun("asp", 0)},
			"", "Every paradigm made no pushes."},
		{"no runs", Scenario{Target: 0.85}, nil, "", "There are no runs to compare."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name, s := Winner(c.sc, c.runs)
			if name != c.want || s != c.sentence {
				t.Errorf("Winner = %q, %q\nwant     %q, %q", name, s, c.want, c.sentence)
			}
		})
	}
}

// The tie check tolerates rounding: 0.1+0.2 and 0.3 are the same time.
func TestWinnerTieUpToRounding(t *testing.T) {
	a, b := trainedRun("a", 0.1+0.2, 0.9), trainedRun("b", 0.3, 0.95)
	name, _ := Winner(Scenario{Target: 0.85}, []runstats.Run{a, b})
	if name != "b" {
		t.Fatalf("winner %q, want b (tied on time, higher final accuracy)", name)
	}
}
