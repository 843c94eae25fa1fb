package report

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

func TestMarkdownVirtual(t *testing.T) {
	sum := virtualSummary(0.85, 5)
	for i := range sum.Runs {
		if sum.Runs[i].Paradigm == "dssp:sl=3,su=15" {
			sum.Runs[i].ControllerSeconds = 0.0005 // 5 seeds: 2.5 ms
		}
	}
	md := Markdown(virtualScenario, sum)
	for _, want := range []string{
		"# Heterogeneous pair \\<1 : 2>\n",
		"**No clear winner: dssp:sl=3,su=15 and asp are tied on reaching 85% test accuracy first — medians over 5 seeds: " +
			"dssp:sl=3,su=15 at 303 s (277–311 s, 93.8% interval); asp at 305 s (265–305 s, 93.8% interval); dssp:sl=3,su=15 " +
			"leads asp by the median but not by the mean (0.97×, 95% interval 0.882–1.07×, p = 0.421): median and mean disagree; " +
			"backup:b=1 never reached it.**",
		"```sh\npacer compare --paradigms 'bsp;asp;ssp:s=3' --target 0.85 --out out\n```",
		"| paradigm | time to 85% | reached | accuracy at horizon | wins | p vs leader | leader's edge | pushes/s | wait share | staleness mean / max | dropped | controller calls / time |\n",
		"| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
		"| bsp | 536 s [528–572] | 5/5 | 85.3% [85.1–85.6] | 0/5 | < 0.001 | 1.47× [1.39–1.56] | 10.2 | 24.5% | 0.00 / 0 | 0 | — |\n",
		"| backup:b=1 | not reached | 0/5 | 63.7% [63–65] | 0/5 | < 0.001 | 1.71× [1.65–1.78] | 9.00 | 25% | 0.00 / 0 | 600 | 25 / not measured |\n",
		"| dssp:sl=3,su=15 | 303 s [277–311] | 5/5 | 86.8% [86.8–86.8] | 3/5 | leader | — | 14.9 | 1% | 0.88 / 7 | 0 | 20 / 2.5 ms |\n",
		"Intervals: exact order-statistic interval",
		"Equal horizons: every run trained for the same 600 s of virtual time.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q\n%s", want, md)
		}
	}
	if n := strings.Count(md, "\n| "); n != 1+1+6 {
		t.Errorf("table has %d lines, want header, rule and 6 rows", n)
	}
	if strings.Contains(md, "**asp**") || strings.Contains(md, "**dssp") {
		t.Errorf("a tie has a winner in bold:\n%s", md)
	}
	// Without the wobble between seeds, the faster paradigm wins clearly.
	sum = virtualSummary(0.85, 1)
	one := Markdown(virtualScenario, sum)
	if !strings.Contains(one, "No winner can be named from one seed") {
		t.Errorf("one seed:\n%s", one)
	}
}

func TestMarkdownSimAndEscaping(t *testing.T) {
	runs := []runstats.Run{
		{Paradigm: "a|b", Mode: "sim", Throughput: 1234.4, WaitFraction: 0.1234, Updates: 1234567, StalenessMean: 1.234, StalenessMax: 9},
		{Paradigm: "x_*y*", Mode: "sim", Throughput: 5},
	}
	md := Markdown(Scenario{Title: "t", Command: "echo ```"}, summarize(runs, 0, 10))
	for _, want := range []string{
		"| paradigm | pushes/s | wait share | staleness mean / max | dropped |\n",
		"| a\\|b | 1,234 | 12.3% | 1.23 / 9 | 0 |\n",
		"| x\\_\\*y\\* | 5.00 |",
		"````sh\necho ```\n````",
		"Sim mode measures timing only and names no winner: a\\|b had the highest throughput (1,234 pushes/s, waiting 12.3%, staleness 1.23; medians over 1 seed), x\\_\\*y\\* the least staleness",
		"run --mode virtual",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q\n%s", want, md)
		}
	}
	if strings.Contains(md, "time to") || strings.Contains(md, "**a") {
		t.Error("sim table has a time-to-target column or a winner")
	}
}

// Markdown is read as a file as often as it is rendered: "p < 0.001" is
// written as such, not as an entity; a '<' that could open a tag or an
// autolink is backslash-escaped (rendered as '<' too).
func TestMarkdownLessThan(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"p < 0.001", "p < 0.001"},
		{"a <b> c", `a \<b> c`},
		{"<http://x>", `\<http://x>`},
		{"<1@x.y>", `\<1@x.y>`},
		{"x <", `x \<`},
	} {
		if got := mdEscape(c.in); got != c.want {
			t.Errorf("mdEscape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	md := Markdown(virtualScenario, virtualSummary(0.85, 5))
	if strings.Contains(md, "&lt;") || !strings.Contains(md, "| < 0.001 |") {
		t.Errorf("summary.md escapes p < 0.001 as an entity:\n%s", md)
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
