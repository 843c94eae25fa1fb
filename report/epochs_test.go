package report

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// withProgress gives every run of s what virtual time records beside its
// curve: the epoch of each evaluation (from its throughput, 64 samples a
// push over 12,000), the training loss, falling as the accuracy rises,
// and the mini-batch loss a little above it (none at the first).
func withProgress(s *compare.Summary) *compare.Summary {
	for i := range s.Runs {
		r := &s.Runs[i]
		r.CurveEpochs, r.TrainLoss, r.BatchLoss = nil, nil, nil
		for k, p := range r.Curve {
			r.CurveEpochs = append(r.CurveEpochs, p[0]*r.Throughput*64/12000)
			r.TrainLoss = append(r.TrainLoss, 2.3*(1-p[1])/0.9)
			var b *float64
			if k > 0 {
				v := 1.1 * r.TrainLoss[k]
				b = &v
			}
			r.BatchLoss = append(r.BatchLoss, b)
		}
	}
	return s
}

// Runs that record epochs and losses get accuracy_vs_epoch.png,
// loss_vs_time.png and batch_loss_vs_time.png beside
// accuracy_vs_time.png: written, valid 1200-px PNGs, embedded in
// report.html in that order, and drawn from their own data (not copies of
// the time plot).
func TestWriteEpochAndLossPlots(t *testing.T) {
	dir := t.TempDir()
	sum := withProgress(virtualSummary(0.85, 3))
	paths, err := Write(dir, virtualScenario, sum)
	if err != nil {
		t.Fatal(err)
	}
	plots := []string{FileAccuracy, FileBands, FileEpochs, FileLoss, FileBatchLoss, FileWait, FileStale, FileThru}
	want := append([]string{FileHTML}, plots...)
	want = append(want, FileMarkdown, FileJSON, FileCSV)
	for i, w := range want {
		want[i] = filepath.Join(dir, w)
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v\nwant  %v", paths, want)
	}
	files := readAll(t, paths)
	checkPage(t, virtualScenario, sum, files, plots)
	for _, name := range []string{FileEpochs, FileLoss, FileBatchLoss} {
		img, err := png.Decode(bytes.NewReader(files[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := img.Bounds().Dx(); w != 1200 {
			t.Errorf("%s is %d px wide, want 1200", name, w)
		}
		if bytes.Equal(files[name], files[FileAccuracy]) {
			t.Errorf("%s is the time plot again", name)
		}
	}
	if bytes.Equal(files[FileLoss], files[FileBatchLoss]) {
		t.Errorf("%s is %s again", FileBatchLoss, FileLoss)
	}
	// Either loss changed changes its plot only.
	for _, c := range []struct {
		file string
		edit func(r *runstats.Run)
	}{
		{FileLoss, func(r *runstats.Run) { r.TrainLoss[5] *= 1.5 }},
		{FileBatchLoss, func(r *runstats.Run) { *r.BatchLoss[5] *= 1.5 }},
	} {
		again := withProgress(virtualSummary(0.85, 3))
		for i := range again.Runs {
			c.edit(&again.Runs[i])
		}
		f2, err := render(virtualScenario, again)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range f2 {
			if changed := !bytes.Equal(f.data, files[f.name]); changed != (f.name == c.file || f.name == FileHTML || f.name == FileJSON || f.name == FileCSV) {
				t.Errorf("%s changed %v with the series of %s", f.name, changed, c.file)
			}
		}
	}
	// A later report of runs without them leaves no stale plot behind.
	if _, err := Write(dir, virtualScenario, virtualSummary(0.85, 3)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileEpochs, FileLoss, FileBatchLoss} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s left beside a report without epochs: %v", name, err)
		}
	}
}

// The series by hand: one paradigm, three seeds. Accuracy 0.1 → 0.4 → 0.6
// (seed 1), 0.1 → 0.5 → 0.7 (seed 2), 0.1 → 0.3 → 0.4 (seed 3) at epochs
// 0, 1, 2; the 0.5 target is crossed at epoch 1.5, at epoch 1, and never,
// so the median epoch to it is 1.5 (of 1, 1.5, +Inf). The training losses
// 2.3 → 1.0 → 0.5, 2.3 → 0.8 → 0.4, 2.3 → 1.2 → 0.6 have medians 2.3, 1.0,
// 0.5.
func TestEpochAndLossSeriesByHand(t *testing.T) {
	accs := [][]float64{{0.1, 0.4, 0.6}, {0.1, 0.5, 0.7}, {0.1, 0.3, 0.4}}
	losses := [][]float64{{2.3, 1.0, 0.5}, {2.3, 0.8, 0.4}, {2.3, 1.2, 0.6}}
	var runs []runstats.Run
	for s := range accs {
		r := runstats.Run{Paradigm: "bsp", Mode: "virtual", Seed: uint64(s + 1), Workers: 2, Shards: 1, Throughput: 1,
			CurveEpochs: []float64{0, 1, 2}, TrainLoss: losses[s]}
		for k, a := range accs[s] {
			r.Curve = append(r.Curve, [2]float64{float64(10 * k), a})
		}
		r.SetCurve(r.Curve, 0.5)
		runs = append(runs, r)
	}
	sum := summarize(runs, 0.5, 20)
	gs := groupsOf(sum)
	mid, _, _ := medianCurve(gs[0], epochAccuracy)
	if want := []float64{0, 1, 2}; len(mid) != 3 || mid[1].X != want[1] || mid[2].X != want[2] || math.Abs(mid[1].Y-0.4) > 1e-12 || math.Abs(mid[2].Y-0.6) > 1e-12 {
		t.Errorf("accuracy over epochs %v, want medians 0.1, 0.4, 0.6 at epochs 0, 1, 2", mid)
	}
	m, known := epochAxisOf(sum).toTarget(gs[0])
	if !known || m == nil || *m != 1.5 {
		t.Errorf("median epoch to the target %v (known %v), want 1.5", m, known)
	}
	_, p, err := accuracyPlot(sum, gs, epochAxisOf(sum))
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Max != 2 || p.X.Label.Text == timeAxis(sum.Runs) {
		t.Errorf("epoch axis to %v labelled %q", p.X.Max, p.X.Label.Text)
	}
	loss, lo, hi := medianCurve(gs[0], timeLoss)
	for k, want := range []float64{2.3, 1.0, 0.5} {
		if len(loss) != 3 || loss[k].Y != want || loss[k].X != float64(10*k) {
			t.Fatalf("training loss over time %v, want medians 2.3, 1.0, 0.5 at 0, 10, 20 s", loss)
		}
	}
	if lo[2].Y != 0.4 || hi[2].Y != 0.6 {
		t.Errorf("last band [%v, %v], want [0.4, 0.6] (the three seeds' extremes)", lo[2].Y, hi[2].Y)
	}
	_, lp, err := lossPlot(sum, gs, trainLossKind)
	if err != nil {
		t.Fatal(err)
	}
	// Cut below the shared first loss, down to the lowest band.
	if lp.Y.Max >= 2.3 || lp.Y.Max < 1.2 || lp.Y.Min > 0.4 || lp.Y.Min < 0 {
		t.Errorf("loss axis [%v, %v], want it within [0, 2.3) around 0.4…1.2", lp.Y.Min, lp.Y.Max)
	}
	// A run without epochs has no epoch to a target: the marker is unknown.
	runs[2].CurveEpochs = nil
	if _, known := epochAxisOf(sum).toTarget(groupsOf(summarize(runs, 0.5, 20))[0]); known {
		t.Error("median epoch to the target known for runs that record no epochs")
	}
}

// Runs on mean-subtracted images say so among the page's facts; others
// do not.
func TestFactsSayNormalize(t *testing.T) {
	sum := virtualSummary(0.85, 2)
	if slices.Contains(facts(sum), "normalize mean") {
		t.Error("runs on the images as loaded are said to be normalized")
	}
	for i := range sum.Runs {
		sum.Runs[i].Normalize = "mean"
	}
	if !slices.Contains(facts(sum), "normalize mean") {
		t.Errorf("facts %v lack the normalization", facts(sum))
	}
}

// Live runs record the workers' mini-batch losses only: the report draws
// batch_loss_vs_time.png and no loss_vs_time.png, skips an evaluation
// without one (no push since the previous) in the medians, and leaves its
// curves.csv cell empty. Seeds 2.0 → 1.0 → 0.5, 2.2 → 0.8 → none,
// 1.8 → 1.2 → 0.6: medians 2.0 at 10 s and, over each seed's last, 0.6 at
// 30 s.
func TestBatchLossByHand(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	losses := [][]*float64{{v(2.0), v(1.0), v(0.5)}, {v(2.2), v(0.8), nil}, {v(1.8), v(1.2), v(0.6)}}
	var runs []runstats.Run
	for s := range losses {
		r := runstats.Run{Paradigm: "bsp", Mode: "inproc", Seed: uint64(s + 1), Workers: 2, Shards: 1, Throughput: 1,
			BatchLoss: losses[s]}
		for k := range 3 {
			r.Curve = append(r.Curve, [2]float64{float64(10 * (k + 1)), float64(k+1) / 4})
		}
		r.SetCurve(r.Curve, 0.5)
		runs = append(runs, r)
	}
	sum := summarize(runs, 0.5, 30)
	gs := groupsOf(sum)
	mid, _, _ := medianCurve(gs[0], timeBatchLoss)
	if len(mid) != 2 || mid[0] != (plotter.XY{X: 10, Y: 2.0}) || mid[1] != (plotter.XY{X: 30, Y: 0.6}) {
		t.Errorf("mini-batch loss medians %v, want 2.0 at 10 s and 0.6 at 30 s", mid)
	}
	files, err := render(virtualScenario, sum)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
	}
	if !slices.Contains(names, FileBatchLoss) || slices.Contains(names, FileLoss) {
		t.Errorf("files %v: want %s and no %s", names, FileBatchLoss, FileLoss)
	}
	csv := string(curvesCSV(sum))
	for _, line := range []string{"paradigm,seed,seconds,test_accuracy,epoch,train_loss,batch_loss\n",
		"\nbsp,1,10,0.25,,,2\n", "\nbsp,2,20,0.5,,,0.8\n", "\nbsp,2,30,0.75,,,\n", "\nbsp,3,30,0.75,,,0.6\n"} {
		if !strings.Contains(csv, line) {
			t.Errorf("curves.csv lacks %q:\n%s", line, csv)
		}
	}
}
