package report

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

func TestMarkdownVirtual(t *testing.T) {
	runs := virtualRuns(0.85)
	runs[4].ControllerSeconds, runs[5].ControllerSeconds = 0.0025, 31e-6
	md := Markdown(virtualScenario, runs)
	for _, want := range []string{
		"# Heterogeneous pair &lt;1 : 2>\n",
		"**asp reached 85% test accuracy first, at 275 s",
		"```sh\npacer compare --paradigms 'bsp;asp;ssp:s=3' --target 0.85 --out out\n```",
		"| paradigm | time to 85% | final acc | throughput (pushes/s) | wait share | max gap | staleness mean / max | dropped | updates | controller calls / time |\n",
		"| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
		"| bsp | 535 s | 85.4% | 10.2 | 24.5% | 0 | 0.00 / 0 | 0 | 5,508 | — |\n",
		"| **asp** | 275 s | 86.9% | 15.1 | 0% | 0 | 0.90 / 6 | 0 | 8,154 | 1 / not measured |\n",
		"| dssp:sl=3,su=15 | 306 s | 86.8% | 14.9 | 1% | 14 | 0.88 / 7 | 0 | 8,046 | 4 / 2.5 ms |\n",
		"| backup:b=1 | not reached | 64.1% | 9.00 | 25% | 1 | 0.00 / 0 | 120 | 4,860 | 5 / 31 µs |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q\n%s", want, md)
		}
	}
	if n := strings.Count(md, "\n| "); n != 1+1+6 {
		t.Errorf("table has %d lines, want header, rule and 6 rows", n)
	}
}

func TestMarkdownSimAndEscaping(t *testing.T) {
	runs := []runstats.Run{
		{Paradigm: "a|b", Mode: "sim", Throughput: 1234.4, WaitFraction: 0.1234, Updates: 1234567, StalenessMean: 1.234, StalenessMax: 9},
		{Paradigm: "x_*y*", Mode: "sim", Throughput: 5},
	}
	md := Markdown(Scenario{Title: "t", Command: "echo ```"}, runs)
	for _, want := range []string{
		"| paradigm | throughput (pushes/s) | wait share | max gap | staleness mean / max | dropped | updates |\n",
		"| **a\\|b** | 1,234 | 12.3% | 0 | 1.23 / 9 | 0 | 1,234,567 |\n",
		"| x\\_\\*y\\* | 5.00 |",
		"````sh\necho ```\n````",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q\n%s", want, md)
		}
	}
	if strings.Contains(md, "time to") {
		t.Error("sim table has a time-to-target column")
	}
}

// A mixed set (a sim run beside trained ones) shows dashes, not zeros, where
// accuracy does not apply.
func TestTableMixedModes(t *testing.T) {
	runs := []runstats.Run{trainedRun("bsp", 100, 0.9), simRun("asp", 3)}
	tb := summaryTable(Scenario{Target: 0.85}, runs)
	if got := strings.Join(tb.rows[1][:3], ","); got != "asp,—,—" {
		t.Errorf("sim row in a trained table = %q", got)
	}
	if tb.winner != 0 {
		t.Errorf("winner row %d, want 0", tb.winner)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{pct(0.85), "85%"}, {pct(0.8512), "85.1%"}, {pct(0), "0%"}, {pct(1), "100%"},
		{secs(412.4), "412 s"}, {secs(3612.6), "3,613 s"}, {secs(50.5), "50.5 s"}, {secs(8.25), "8.25 s"}, {secs(0), "0 s"},
		{rate(0.5), "0.50"}, {rate(41.23), "41.2"}, {rate(252.4), "252"}, {rate(12345.6), "12,346"},
		{times(1.94), "1.9×"}, {times(12.4), "12×"}, {times(1.04), "1.04×"}, {times(1.1), "1.1×"},
		{group(0), "0"}, {group(999), "999"}, {group(1000), "1,000"}, {group(-1234567), "-1,234,567"},
		{andList(nil), ""}, {andList([]string{"a"}), "a"}, {andList([]string{"a", "b"}), "a and b"}, {andList([]string{"a", "b", "c"}), "a, b and c"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestTicks(t *testing.T) {
	ts := niceTicks{format: plainNumber}.Ticks(0, 0.9)
	var labels []string
	for _, tk := range ts {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9" {
		t.Errorf("niceTicks(0, 0.9) labels %q", got)
	}
	labels = nil
	for _, tk := range (percentTicks{scale: 100, log: true}).Ticks(-3, 0) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.1% 1% 10% 100%" {
		t.Errorf("log percent labels %q", got)
	}
	labels = nil
	for _, tk := range (intTicks{}).Ticks(-0.5, 11.5) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 2 4 6 8 10" {
		t.Errorf("intTicks labels %q", got)
	}
}
