package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// Scenario says what was compared and how to rerun it; it heads every report.
type Scenario struct {
	Title       string // page and summary.md heading; a default is used when empty
	Description string // the cluster and workload in a sentence or two
	Command     string // the exact command that reproduces the runs
}

// File names Write produces, in the order it returns them.
const (
	FileHTML     = "report.html"
	FileAccuracy = "accuracy_vs_time.png"
	FileBands    = "accuracy_bands.png"    // one panel per paradigm, past maxBands paradigms
	FileEpochs   = "accuracy_vs_epoch.png" // runs that record their epochs only (virtual time)
	FileLoss     = "loss_vs_time.png"      // runs that record their training loss only (virtual time)
	// runs that record their mini-batch losses only (virtual time; live
	// workers that report theirs)
	FileBatchLoss = "batch_loss_vs_time.png"
	FileWait      = "wait_per_worker.png"
	FileStale     = "staleness.png"
	FileThru      = "throughput.png"
	FileSplit     = "time_split.png" // runs with a network only
	FileLinks     = "links.png"      // runs with a network only
	FileMarkdown  = "summary.md"
	FileJSON      = "summary.json"
	FileCSV       = "curves.csv"
)

// ErrInput is wrapped by every error about the runs or the scenario.
var ErrInput = errors.New("report: bad input")

// Write renders every file of the report into dir (created if missing) and
// returns the paths written. All files are rendered in memory first, so bad
// input or a plotting failure leaves dir untouched; each file is then written
// to a temporary name and renamed, so a reader never sees half a file.
func Write(dir string, sc Scenario, s *compare.Summary) ([]string, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: empty output directory", ErrInput)
	}
	files, err := render(sc, s)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: output directory: %w", err)
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := writeFile(p, f.data); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	// A report without accuracy (sim runs) must not sit beside an earlier
	// report's accuracy plot, which would read as this one's.
	for _, name := range []string{FileAccuracy, FileBands, FileEpochs, FileLoss, FileBatchLoss, FileCSV, FileSplit, FileLinks, FileAuto} {
		if !hasFile(files, name) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return paths, fmt.Errorf("report: remove the earlier %s: %w", name, err)
			}
		}
	}
	return paths, nil
}

func hasFile(files []file, name string) bool {
	for _, f := range files {
		if f.name == name {
			return true
		}
	}
	return false
}

type file struct {
	name string
	data []byte
}

// render produces every file's bytes; the HTML page embeds the plots.
func render(sc Scenario, s *compare.Summary) ([]file, error) {
	if err := validate(s); err != nil {
		return nil, err
	}
	gs := groupsOf(s)
	var plots []figure
	if trainedAny(s) {
		fig, ref, err := accuracyPlot(s, gs, timeAxisOf(s))
		if err != nil {
			return nil, err
		}
		plots = append(plots, fig)
		if len(gs) > maxBands && len(s.Seeds) > 1 {
			fig, err := bandsPlot(s, gs, ref)
			if err != nil {
				return nil, err
			}
			plots = append(plots, fig)
		}
		// The epoch axis and the training loss where the runs record them
		// (virtual time).
		if recorded(s, epochAccuracy) {
			fig, _, err := accuracyPlot(s, gs, epochAxisOf(s))
			if err != nil {
				return nil, err
			}
			plots = append(plots, fig)
		}
		for _, k := range []lossKind{trainLossKind, batchLossKind} {
			if recorded(s, k.series) {
				fig, _, err := lossPlot(s, gs, k)
				if err != nil {
					return nil, err
				}
				plots = append(plots, fig)
			}
		}
	}
	typ := make([]runstats.Run, len(gs))
	for i, g := range gs {
		typ[i] = typical(g)
	}
	for _, mk := range []func([]runstats.Run) (figure, error){waitPlot, stalenessPlot, throughputPlot} {
		fig, err := mk(typ)
		if err != nil {
			return nil, err
		}
		plots = append(plots, fig)
	}
	if slices.ContainsFunc(typ, func(r runstats.Run) bool { return r.TimeSplit != nil }) {
		for _, mk := range []func([]runstats.Run) (figure, error){timeSplitPlot, linksPlot} {
			fig, err := mk(typ)
			if err != nil {
				return nil, err
			}
			plots = append(plots, fig)
		}
	}
	if runs := autoRuns(s); len(runs) > 0 {
		fig, err := autoPlot(runs)
		if err != nil {
			return nil, err
		}
		plots = append(plots, fig)
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: summary.json: %w", err)
	}
	page, err := htmlPage(sc, s, plots)
	if err != nil {
		return nil, err
	}
	files := []file{{FileHTML, page}}
	for _, f := range plots {
		files = append(files, file{f.name, f.png})
	}
	files = append(files,
		file{FileMarkdown, []byte(Markdown(sc, s))},
		file{FileJSON, append(js, '\n')})
	if trainedAny(s) {
		files = append(files, file{FileCSV, curvesCSV(s)})
	}
	return files, nil
}

// curvesCSV is every run's accuracy curve, one evaluation a line, with the
// epoch, training loss and mini-batch loss at it where recorded.
func curvesCSV(s *compare.Summary) []byte {
	var b bytes.Buffer
	b.WriteString("paradigm,seed,seconds,test_accuracy,epoch,train_loss,batch_loss\n")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range s.Runs {
		name := r.Paradigm
		if strings.ContainsAny(name, ",\"\n") {
			name = `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		}
		for k, p := range r.Curve {
			// Epochs and losses where the mode records them; empty cells
			// elsewhere (and for a mini-batch loss with no batch since the
			// previous evaluation).
			var epoch, loss, batch string
			if len(r.CurveEpochs) == len(r.Curve) {
				epoch = g(r.CurveEpochs[k])
			}
			if len(r.TrainLoss) == len(r.Curve) {
				loss = g(r.TrainLoss[k])
			}
			if len(r.BatchLoss) == len(r.Curve) && r.BatchLoss[k] != nil {
				batch = g(*r.BatchLoss[k])
			}
			fmt.Fprintf(&b, "%s,%d,%s,%s,%s,%s,%s\n", name, r.Seed, g(p[0]), g(p[1]), epoch, loss, batch)
		}
	}
	return b.Bytes()
}

func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("report: write %s: %w", path, werr)
	}
	return nil
}

// validate rejects what would make a misleading report or a NaN in a plot.
func validate(s *compare.Summary) error {
	if s == nil || len(s.Runs) == 0 {
		return fmt.Errorf("%w: no runs to report", ErrInput)
	}
	if bad(s.Target) || s.Target < 0 || s.Target > 1 {
		return fmt.Errorf("%w: target %v is not an accuracy in [0, 1]", ErrInput, s.Target)
	}
	if bad(s.HorizonSeconds) || s.HorizonSeconds < 0 {
		return fmt.Errorf("%w: horizon %v is not a time ≥ 0", ErrInput, s.HorizonSeconds)
	}
	known := map[string]bool{}
	for _, st := range s.Paradigms {
		if st.Paradigm == "" {
			return fmt.Errorf("%w: a paradigm has no name", ErrInput)
		}
		if known[st.Paradigm] {
			return fmt.Errorf("%w: paradigm %q is listed twice", ErrInput, st.Paradigm)
		}
		if st.Throughput.Median == nil || st.WaitFraction.Median == nil || st.StalenessMean.Median == nil {
			return fmt.Errorf("%w: paradigm %q has no statistics", ErrInput, st.Paradigm)
		}
		known[st.Paradigm] = true
	}
	seen := map[string]int{}
	for i := range s.Runs {
		r := &s.Runs[i]
		if r.Paradigm == "" {
			return fmt.Errorf("%w: run %d has no paradigm name", ErrInput, i)
		}
		if !known[r.Paradigm] {
			return fmt.Errorf("%w: run %d (%s) belongs to no paradigm of the summary", ErrInput, i, r.Paradigm)
		}
		key := fmt.Sprintf("%s\x00%d", r.Paradigm, r.Seed)
		if j, dup := seen[key]; dup {
			return fmt.Errorf("%w: runs %d and %d both have paradigm %q and seed %d", ErrInput, j, i, r.Paradigm, r.Seed)
		}
		seen[key] = i
		if err := validateRun(r); err != nil {
			return fmt.Errorf("%w: run %d (%s, seed %d): %v", ErrInput, i, r.Paradigm, r.Seed, err)
		}
	}
	v := s.Verdict
	for _, name := range append(append([]string{}, v.Tied...), v.Leader, v.RunnerUp) {
		if name != "" && !known[name] {
			return fmt.Errorf("%w: the verdict names %q, which did not run", ErrInput, name)
		}
	}
	if v.Metric != compare.MetricNone && len(s.Paradigms) > 1 && (v.Leader == "" || v.RunnerUp == "" || v.P == nil) {
		return fmt.Errorf("%w: the verdict lacks its leader, runner-up or test", ErrInput)
	}
	return nil
}

func validateRun(r *runstats.Run) error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"seconds", r.Seconds}, {"virtual_seconds", r.VirtualSeconds}, {"throughput", r.Throughput},
		{"wait_fraction", r.WaitFraction}, {"staleness_mean", r.StalenessMean},
		{"final_accuracy", r.FinalAccuracy}, {"best_accuracy", r.BestAccuracy}, {"target", r.Target},
	} {
		if bad(f.v) || f.v < 0 {
			return fmt.Errorf("%s = %v, want a finite value ≥ 0", f.name, f.v)
		}
	}
	if r.WaitFraction > 1 {
		return fmt.Errorf("wait_fraction = %v, want a share in [0, 1]", r.WaitFraction)
	}
	for w, v := range r.WorkerWait {
		if bad(v) || v < 0 || v > 1 {
			return fmt.Errorf("worker_wait_fraction[%d] = %v, want a share in [0, 1]", w, v)
		}
	}
	for s, n := range r.StalenessHist {
		if n < 0 {
			return fmt.Errorf("staleness_hist[%d] = %d is negative", s, n)
		}
	}
	for k, p := range r.Curve {
		if bad(p[0]) || bad(p[1]) || p[0] < 0 || p[1] < 0 || p[1] > 1 {
			return fmt.Errorf("curve[%d] = %v, want finite seconds ≥ 0 and accuracy in [0, 1]", k, p)
		}
		if k > 0 && p[0] < r.Curve[k-1][0] {
			return fmt.Errorf("curve[%d] time %v goes back from %v", k, p[0], r.Curve[k-1][0])
		}
	}
	if t := r.TimeToTarget; t != nil && (bad(*t) || *t < 0) {
		return fmt.Errorf("time_to_target = %v, want a finite value ≥ 0", *t)
	}
	if r.Pushes < 0 || r.Updates < 0 || r.Dropped < 0 || r.MaxGap < 0 || r.StalenessMax < 0 {
		return errors.New("counters must not be negative")
	}
	return nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
