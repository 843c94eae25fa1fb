package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

var virtualScenario = Scenario{
	Title:       "Heterogeneous pair <1 : 2>",
	Description: "Two workers, one twice as fast as the other & an MLP on Fashion-MNIST.",
	Command:     "pacer compare --paradigms 'bsp;asp;ssp:s=3' --target 0.85 --out out",
}

func readAll(t *testing.T, paths []string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[filepath.Base(p)] = b
	}
	return m
}

// escaped is s as html/template writes it in element text.
func escaped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := template.Must(template.New("").Parse("{{.}}")).Execute(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkPage checks the page's content: winner, table, embedded plots that
// match the PNG files, and nothing fetched from elsewhere.
func checkPage(t *testing.T, sc Scenario, s *compare.Summary, files map[string][]byte, plots []string) {
	t.Helper()
	page := string(files[FileHTML])
	sentence, won := Headline(s)
	name := ""
	if won {
		name = *s.Verdict.Winner
	}
	box := `<div class="winner"><small>Winner</small>` + escaped(t, sentence) + "</div>"
	if name == "" {
		box = `<div class="winner none"><small>No winner</small>` + escaped(t, sentence) + "</div>"
	} else if !strings.Contains(page, `<tr class="win"><td>`+escaped(t, name)+"</td>") {
		t.Errorf("the winner's table row is not marked")
	}
	for _, want := range []string{box, escaped(t, title(sc)), escaped(t, sc.Command), "<table>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	tb := summaryTable(s)
	for _, h := range tb.head {
		if !strings.Contains(page, "<th>"+escaped(t, h)+"</th>") {
			t.Errorf("report.html lacks column %q", h)
		}
	}
	for _, row := range tb.rows {
		if !strings.Contains(page, "<td>"+escaped(t, row[0])+"</td>") {
			t.Errorf("report.html lacks row %q", row[0])
		}
	}
	srcs := regexp.MustCompile(`<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) != len(plots) {
		t.Fatalf("report.html embeds %d images, want %d", len(srcs), len(plots))
	}
	for k, m := range srcs {
		img, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(img, files[plots[k]]) {
			t.Errorf("embedded image %d differs from %s", k, plots[k])
		}
	}
	if ext := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import`).FindString(page); ext != "" {
		t.Errorf("report.html refers to an external resource: %q", ext)
	}
}

func TestWriteWithCurves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out") // Write creates it
	sum := virtualSummary(0.85, 5)
	paths, err := Write(dir, virtualScenario, sum)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{FileHTML, FileAccuracy, FileBands, FileWait, FileStale, FileThru, FileMarkdown, FileJSON, FileCSV}
	for i, w := range want {
		want[i] = filepath.Join(dir, w)
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v\nwant  %v", paths, want)
	}
	files := readAll(t, paths)
	checkPage(t, virtualScenario, sum, files, []string{FileAccuracy, FileBands, FileWait, FileStale, FileThru})
	for _, name := range []string{FileAccuracy, FileBands, FileWait, FileStale, FileThru} {
		img, err := png.Decode(bytes.NewReader(files[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := img.Bounds().Dx(); w != 1200 {
			t.Errorf("%s is %d px wide, want 1200", name, w)
		}
	}
	var back compare.Summary
	if err := json.Unmarshal(files[FileJSON], &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, sum) {
		t.Error("summary.json does not read back as the summary given")
	}
	if strings.Count(string(files[FileCSV]), "\n") != 1+len(sum.Runs)*len(sum.Runs[0].Curve) {
		t.Errorf("curves.csv has %d lines", strings.Count(string(files[FileCSV]), "\n"))
	}
	md := string(files[FileMarkdown])
	if md != Markdown(virtualScenario, sum) {
		t.Error("summary.md differs from Markdown()")
	}
	page := string(files[FileHTML])
	// The scenario's own markup is shown as text, never as markup.
	if strings.Contains(page, "<1 : 2>") || !strings.Contains(page, "&lt;1 : 2&gt;") {
		t.Error("scenario title was not HTML-escaped")
	}
	for _, w := range []string{"5 seeds each", "interval", "exact order-statistic", "interpolated linearly", "horizon 600 s"} {
		if !strings.Contains(page, w) {
			t.Errorf("report.html does not say %q", w)
		}
	}
}

func TestWriteSimOnly(t *testing.T) {
	dir := t.TempDir()
	// An earlier training report in the same directory: its accuracy plot
	// and curves must not survive next to the sim report.
	if _, err := Write(dir, virtualScenario, virtualSummary(0.85, 3)); err != nil {
		t.Fatal(err)
	}
	sum := simSummary(3)
	sc := Scenario{Title: "Mixed 32", Command: "pacer compare --mode sim"}
	paths, err := Write(dir, sc, sum)
	if err != nil {
		t.Fatal(err)
	}
	files := readAll(t, paths)
	for _, f := range []string{FileAccuracy, FileBands, FileCSV} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists beside a sim report: %v", f, err)
		}
	}
	if len(paths) != 6 {
		t.Errorf("wrote %d files, want 6", len(paths))
	}
	checkPage(t, sc, sum, files, []string{FileWait, FileStale, FileThru})
	md := string(files[FileMarkdown])
	if strings.Contains(md, "time to") || strings.Contains(md, "accuracy at") {
		t.Error("summary.md of sim runs has accuracy columns")
	}
	// 32 workers × 8 paradigms is too many bars: the spread is shown.
	if !strings.Contains(string(files[FileHTML]), "median") {
		t.Error("waiting plot caption does not describe the spread over many workers")
	}
}

func TestWriteDeterministic(t *testing.T) {
	for _, c := range []struct {
		name string
		sc   Scenario
		sum  *compare.Summary
	}{{"virtual", virtualScenario, virtualSummary(0.85, 3)}, {"sim", Scenario{}, simSummary(2)}} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Write(filepath.Join(t.TempDir(), "a"), c.sc, c.sum)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Write(filepath.Join(t.TempDir(), "b"), c.sc, c.sum)
			if err != nil {
				t.Fatal(err)
			}
			fa, fb := readAll(t, a), readAll(t, b)
			for name, data := range fa {
				if !bytes.Equal(data, fb[name]) {
					t.Errorf("%s differs between two writes of the same input", name)
				}
			}
		})
	}
}

// A different input must give different plots, or the equality above would
// hold for a renderer that ignores its data.
func TestPlotsFollowData(t *testing.T) {
	runs := virtualRuns(0.85)
	f1, err := render(virtualScenario, summarize(runs, 0.85, 600))
	if err != nil {
		t.Fatal(err)
	}
	runs[2].Throughput *= 2
	runs[2].WorkerWait = []float64{0.9, 0.1}
	runs[2].StalenessHist = []int64{5, 5, 5, 5, 5}
	runs[2].Curve[40][1] = 0.3
	f2, err := render(virtualScenario, summarize(runs, 0.85, 600))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f1 {
		if bytes.Equal(f1[i].data, f2[i].data) {
			t.Errorf("%s did not change with its data", f1[i].name)
		}
	}
}

func TestWriteBadInput(t *testing.T) {
	good := summarize(virtualRuns(0.85), 0.85, 600)
	good.Target = 85
	mod := func(f func(r []runstats.Run)) *compare.Summary {
		r := virtualRuns(0.85)
		f(r)
		return summarize(r, 0.85, 600)
	}
	cases := []struct {
		name string
		sc   Scenario
		runs *compare.Summary
		want string
	}{
		{"no runs", virtualScenario, summarize(nil, 0.85, 600), "no runs"},
		{"target above 1", Scenario{}, good, "target"},
		{"unnamed run", virtualScenario, mod(func(r []runstats.Run) { r[1].Paradigm = "" }), "no name"},
		{"duplicate paradigm", virtualScenario, mod(func(r []runstats.Run) { r[1].Paradigm = "bsp" }), "both have paradigm \"bsp\" and seed 1"},
		{"NaN throughput", virtualScenario, mod(func(r []runstats.Run) { r[0].Throughput = math.NaN() }), "throughput"},
		{"infinite accuracy", virtualScenario, mod(func(r []runstats.Run) { r[0].Curve[3][1] = math.Inf(1) }), "curve[3]"},
		{"curve back in time", virtualScenario, mod(func(r []runstats.Run) { r[0].Curve[3][0] = 1 }), "goes back"},
		{"wait share above 1", virtualScenario, mod(func(r []runstats.Run) { r[0].WorkerWait[1] = 1.5 }), "worker_wait_fraction[1]"},
		{"negative staleness count", virtualScenario, mod(func(r []runstats.Run) { r[1].StalenessHist[2] = -1 }), "staleness_hist[2]"},
		{"negative counter", virtualScenario, mod(func(r []runstats.Run) { r[1].Dropped = -1 }), "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			paths, err := Write(dir, c.sc, c.runs)
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Write error = %v, want ErrInput mentioning %q", err, c.want)
			}
			if paths != nil {
				t.Errorf("paths = %v on bad input", paths)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Error("bad input still created the output directory")
			}
		})
	}
}

func TestWriteUnwritableDir(t *testing.T) {
	base := t.TempDir()
	blocker := filepath.Join(base, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A path under a regular file cannot be created, even by root.
	if _, err := Write(filepath.Join(blocker, "out"), virtualScenario, virtualSummary(0.85, 2)); err == nil {
		t.Fatal("Write into a path under a file succeeded")
	}
	if _, err := Write("", virtualScenario, virtualSummary(0.85, 2)); !errors.Is(err, ErrInput) {
		t.Fatalf("Write to an empty dir name: %v", err)
	}
}

// Unusual but valid inputs still give a full report: one run, no per-worker
// data, no staleness recorded, a one-point curve, many workers, no throughput.
func TestWriteEdgeCases(t *testing.T) {
	one := virtualRuns(0.85)[:1]
	bare := []runstats.Run{{Paradigm: "bsp", Mode: "sim"}, {Paradigm: "asp", Mode: "sim"}}
	point := []runstats.Run{{Paradigm: "bsp", Mode: "virtual", Curve: [][2]float64{{0, 0.1}}, FinalAccuracy: 0.1}}
	many := simRuns()[:2]
	for i := range many {
		many[i].WorkerWait = make([]float64, 1000)
		for w := range many[i].WorkerWait {
			many[i].WorkerWait[w] = float64(w%97) / 97
		}
	}
	allFresh := []runstats.Run{{Paradigm: "bsp", Mode: "sim", StalenessHist: []int64{10}, Throughput: 3}}
	noTarget := virtualRuns(0)
	for name, runs := range map[string][]runstats.Run{"one": one, "bare": bare, "point": point, "many": many, "fresh": allFresh, "no target": noTarget} {
		t.Run(name, func(t *testing.T) {
			sc := Scenario{}
			target := 0.85
			if name == "no target" {
				target = 0
			}
			sum := summarize(runs, target, 600)
			paths, err := Write(t.TempDir(), sc, sum)
			if err != nil {
				t.Fatal(err)
			}
			files := readAll(t, paths)
			var plots []string
			for _, p := range paths {
				if strings.HasSuffix(p, ".png") {
					plots = append(plots, filepath.Base(p))
				}
			}
			checkPage(t, sc, sum, files, plots)
		})
	}
}

func TestHTMLEscapesRunNames(t *testing.T) {
	runs := simRuns()[:2]
	runs[0].Paradigm = `<script>alert("x")</script>`
	files, err := render(Scenario{Description: `<img src=x onerror=alert(1)>`}, summarize(runs, 0, 100))
	if err != nil {
		t.Fatal(err)
	}
	page := string(files[0].data)
	if strings.Contains(page, "<script>") || strings.Contains(page, "<img src=x") {
		t.Error("user text reached report.html unescaped")
	}
}
