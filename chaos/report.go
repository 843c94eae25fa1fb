package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Row is the figures of a group of runs.
type Row struct {
	Paradigm string  `json:"paradigm"` // "all" for a whole-kind or whole-suite row
	Kind     string  `json:"kind"`     // "all" for a whole-paradigm or whole-suite row
	Runs     int     `json:"runs"`
	Finished int     `json:"finished"`
	Hangs    int     `json:"hangs"`
	Failed   int     `json:"failed"`
	Lost     uint64  `json:"lost"`      // acknowledged updates lost, summed
	LostRuns int     `json:"lost_runs"` // runs that lost any
	Leaked   int     `json:"leaked"`    // processes left behind, summed
	Overrun  int     `json:"overrun"`   // runs whose pushes exceeded the job's length by more than one per worker
	Disagree int     `json:"disagree"`  // auto runs whose shards ended under another rule than the coordinator's
	Faults   int     `json:"faults"`    // faults scheduled
	Fired    int     `json:"fired"`     // of them, fired before the job ended
	MeanSecs float64 `json:"mean_secs"` // time to finish, finished runs
	MaxSecs  float64 `json:"max_secs"`  // of the finished runs
}

// Summary is what a suite reports: its settings, every run and the rows.
type Summary struct {
	Command    string  `json:"command"`
	Seed       uint64  `json:"seed"`
	From       int     `json:"from"`
	Durability string  `json:"durability"`
	Workers    int     `json:"workers"`
	Shards     int     `json:"shards"`
	Pushes     int     `json:"pushes"`
	TimeoutS   float64 `json:"timeout_secs"`
	Runs       []Run   `json:"runs"`
	ByParadigm []Row   `json:"by_paradigm"`
	ByKind     []Row   `json:"by_kind"`
	Total      Row     `json:"total"`
}

// Summarize groups runs by paradigm and by kind.
func Summarize(c Config, command string, runs []Run) Summary {
	c.fill()
	s := Summary{Command: command, Seed: c.Seed, From: c.From, Durability: c.Durability, Workers: c.Workers,
		Shards: c.Shards, Pushes: c.Pushes, TimeoutS: c.Timeout.Seconds(), Runs: runs}
	group := func(key func(Run) (string, string)) []Row {
		rows := map[[2]string]*Row{}
		var order [][2]string
		for _, r := range runs {
			p, k := key(r)
			id := [2]string{p, k}
			if rows[id] == nil {
				rows[id] = &Row{Paradigm: p, Kind: k}
				order = append(order, id)
			}
			rows[id].add(r, c.Workers)
		}
		sort.SliceStable(order, func(a, b int) bool {
			return rank(order[a][0], Paradigms)*100+rank(order[a][1], Kinds) < rank(order[b][0], Paradigms)*100+rank(order[b][1], Kinds)
		})
		out := make([]Row, len(order))
		for i, id := range order {
			out[i] = rows[id].done()
		}
		return out
	}
	s.ByParadigm = group(func(r Run) (string, string) { return r.Paradigm, "all" })
	s.ByKind = group(func(r Run) (string, string) { return "all", r.Kind })
	if t := group(func(Run) (string, string) { return "all", "all" }); len(t) == 1 {
		s.Total = t[0]
	}
	return s
}

func rank(x string, xs []string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return len(xs)
}

func (w *Row) add(r Run, workers int) {
	w.Runs++
	switch r.Outcome {
	case "finished":
		w.Finished++
		w.MeanSecs += r.Seconds
		w.MaxSecs = max(w.MaxSecs, r.Seconds)
	case "hang":
		w.Hangs++
	default:
		w.Failed++
	}
	w.Lost += r.Lost
	if r.Lost > 0 {
		w.LostRuns++
	}
	w.Leaked += r.Leaked
	if len(r.Disagree) > 0 {
		w.Disagree++
	}
	w.Faults += len(r.Faults)
	w.Fired += r.Fired
	if r.Target > 0 && r.Pushes > r.Target+int64(workers) {
		w.Overrun++
	}
}

func (w *Row) done() Row {
	if w.Finished > 0 {
		w.MeanSecs /= float64(w.Finished)
	}
	return *w
}

// Table prints the rows, then every run that needs a look with its
// schedule and the command that replays it.
func (s Summary) Table(out io.Writer, c Config) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "paradigm\tfault kind\truns\tfaults fired\tfinished\thangs\tfailed\tlost updates\truns losing\tleaked procs\toverrun\trules differ\tmean s\tmax s\t")
	line := func(r Row) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t\n", r.Paradigm, r.Kind, r.Runs, r.Fired, r.Faults, r.Finished,
			r.Hangs, r.Failed, r.Lost, r.LostRuns, r.Leaked, r.Overrun, r.Disagree, r.MeanSecs, r.MaxSecs)
	}
	for _, r := range s.ByParadigm {
		line(r)
	}
	for _, r := range s.ByKind {
		line(r)
	}
	line(s.Total)
	tw.Flush()
	for _, r := range s.Runs {
		if !r.Failed() {
			continue
		}
		var fs []string
		for _, f := range r.Faults {
			fs = append(fs, f.String())
		}
		fmt.Fprintf(out, "\nrun %d (%s, %s): %s; lost %d, leaked %d, pushes %d of %d, %.1f s\n  faults: %s (fired %d, at pushes %v)\n  replay: %s\n",
			r.Index, r.Paradigm, r.Kind, r.Outcome, r.Lost, r.Leaked, r.Pushes, r.Target, r.Seconds, strings.Join(fs, "; "), r.Fired, r.FiredAt, r.Replay(c))
		for _, d := range r.Disagree {
			fmt.Fprintf(out, "  rules disagree: %s\n", d)
		}
		if r.Error != "" {
			fmt.Fprintf(out, "  error: %s\n", r.Error)
		}
	}
}
