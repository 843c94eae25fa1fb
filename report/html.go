package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

//go:embed report.html.tmpl
var pageSource string

// page is parsed once; a template error is a bug in this package, caught by
// every test, so Must is right here.
var page = template.Must(template.New("report").Parse(pageSource))

type pageData struct {
	Title       string
	Description string
	Command     string
	Winner      string
	HasWinner   bool
	Label       string // the verdict box's: Winner, No winner; a race's Equivalent or Undecided
	RaceHead    []string
	RaceRows    [][]string
	Facts       []string
	Methods     []string
	Head        []string
	Rows        []pageRow
	Figures     []pageFigure
	Glossary    []glossEntry
}

type pageRow struct {
	Cells  []string
	Winner bool
}

type pageFigure struct {
	Title   string
	Caption string
	File    string
	Src     template.HTMLAttr
}

type glossEntry struct {
	Name, Params, Text string
	Used               bool
}

// glossary has one line per paradigm of PARADIGMS.md, in its order, worded
// for a reader who has not read the papers.
var glossary = []glossEntry{
	{Name: "bsp", Text: "Bulk synchronous: every worker waits at a barrier after each iteration; all gradients are averaged and applied together, so there is no staleness, but everyone runs at the pace of the slowest worker."},
	{Name: "asp", Text: "Asynchronous: each gradient is applied the moment it arrives and nobody ever waits; fastest iterations, but gradients can be arbitrarily stale."},
	{Name: "ssp", Params: "s", Text: "Stale synchronous: a worker may run at most s iterations ahead of the slowest one; only a worker that gets too far ahead waits."},
	{Name: "dssp", Params: "sl, su", Text: "Dynamic SSP: like SSP with bound sl, but the server may let the fastest worker run up to su − sl extra iterations when it predicts that waiting would be wasted."},
	{Name: "elastic", Params: "r", Text: "ElasticBSP: a barrier like BSP, but placed at the moment (found by ZipLine over each worker's next R predicted pushes) that minimises waiting; workers may do different numbers of iterations between barriers."},
	{Name: "backup", Params: "b", Text: "Synchronous SGD with b backup workers: each step averages the first N of N + b gradients and drops the late ones, so a few stragglers cannot hold everyone up."},
	{Name: "psp", Params: "c, b", Text: "Partial push / partial pull: a shard updates once c gradients arrived and a worker continues once a fraction b of the weight blocks is fresh; tolerates slow workers and slow servers."},
	{Name: "softsync", Params: "n", Text: "n-softsync: each shard applies an update after every ⌊workers/n⌋ gradients, by default scaling each gradient's learning rate down by its staleness."},
}

// htmlPage renders report.html. Plots are embedded as base64 data URIs and
// the CSS is inline, so the one file opens offline and can be mailed around.
func htmlPage(sc Scenario, s *compare.Summary, figs []figure) ([]byte, error) {
	sentence, won := Headline(s)
	tb := summaryTable(s)
	d := pageData{
		Title:       title(sc),
		Description: sc.Description,
		Command:     sc.Command,
		Winner:      sentence,
		HasWinner:   won,
		Label:       "No winner",
		Facts:       facts(s),
		Methods:     methods(s),
		Head:        tb.head,
	}
	if won {
		d.Label = "Winner"
	}
	if s.Race != nil {
		d.Label = raceLabel(s.Race.Verdict.Kind)
		d.RaceHead, d.RaceRows = raceGrid(s)
	}
	for i, r := range tb.rows {
		d.Rows = append(d.Rows, pageRow{Cells: r, Winner: i == tb.winner})
	}
	for _, f := range figs {
		// The attribute is built here from PNG bytes we rendered, never
		// from user input, and base64 has no quote or angle bracket, so
		// marking it trusted is sound. (As a plain value html/template
		// would write every '+' as "&#43;", a third larger page.)
		src := template.HTMLAttr(`src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(f.png) + `"`)
		d.Figures = append(d.Figures, pageFigure{Title: f.title, Caption: f.caption, File: f.name, Src: src})
	}
	used := map[string]bool{}
	for _, st := range s.Paradigms {
		fam, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(st.Paradigm)), ":")
		used[fam] = true
	}
	for _, g := range glossary {
		g.Used = used[g.Name]
		d.Glossary = append(d.Glossary, g)
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("report: report.html: %w", err)
	}
	return buf.Bytes(), nil
}

// facts are the short setup notes under the title: what every run shared.
func facts(s *compare.Summary) []string {
	runs := s.Runs
	var fs []string
	add := func(label string, get func(*runstats.Run) string) {
		v := get(&runs[0])
		for i := range runs[1:] {
			if get(&runs[i+1]) != v {
				v = "varies"
			}
		}
		if v != "" {
			fs = append(fs, label+" "+v)
		}
	}
	each := seedWord(len(s.Seeds)) + " each"
	if s.Race != nil {
		each = fmt.Sprintf("raced over %s (%d runs)", seedWord(len(s.Seeds)), s.Race.Runs)
	}
	fs = append(fs, fmt.Sprintf("%d paradigms", len(s.Paradigms)), each)
	add("mode", func(r *runstats.Run) string { return string(r.Mode) })
	add("scenario", func(r *runstats.Run) string { return r.Scenario })
	add("model", func(r *runstats.Run) string { return r.Model })
	// "normalize mean" where the training set's mean was subtracted; runs
	// on the images as loaded ("") add nothing.
	add("normalize", func(r *runstats.Run) string { return r.Normalize })
	count := func(n int) string {
		if n == 0 {
			return "" // not recorded
		}
		return fmt.Sprint(n)
	}
	add("workers", func(r *runstats.Run) string { return count(r.Workers) })
	add("shards", func(r *runstats.Run) string { return count(r.Shards) })
	if s.HorizonSeconds > 0 {
		fs = append(fs, "horizon "+secs(s.HorizonSeconds)+" (virtual)")
	}
	if s.Target > 0 && trainedAny(s) {
		fs = append(fs, "target "+pct(s.Target)+" test accuracy")
	}
	if s.Version != "" {
		fs = append(fs, "pacer "+s.Version+", commit "+s.Commit)
	}
	return fs
}
