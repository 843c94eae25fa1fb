package compare

import (
	"fmt"
	"strings"
)

// This file: the verdict's reasons in words.

// reasons collects why each paradigm is tied with the leader.
type reasons struct {
	few                   []string
	missed                []missedSeeds
	disagree, unseparated []withP
	small                 []withP
}

func (w *reasons) text(v Verdict, stats []ParadigmStats, names []string, order []int) string {
	L := v.Leader
	if v.Winner != nil {
		ru := stats[order[1]]
		return fmt.Sprintf("%s is separated from every other paradigm (p < 0.05 and an advantage of at least 2%%); "+
			"from the runner-up %s by %s (p %s)", L, ru.Paradigm, ru.LeaderAdvantage.Text(), pWords(*ru.PVsLeader))
	}
	var parts []string
	if len(w.unseparated) > 0 {
		var xs []string
		for _, x := range w.unseparated {
			xs = append(xs, fmt.Sprintf("%s (p %s)", x.name, pWords(x.p)))
		}
		parts = append(parts, fmt.Sprintf("the paired test does not separate %s from %s", L, orList(xs)))
	}
	for _, x := range w.small {
		parts = append(parts, fmt.Sprintf("%s leads %s by only %s (p %s), below the 2%% minimum effect", L, x.name, x.eff.Text(), pWords(x.p)))
	}
	for _, x := range w.disagree {
		parts = append(parts, fmt.Sprintf("%s leads %s by the median but not by the mean (%s, p %s): median and mean disagree",
			L, x.name, x.eff.Text(), pWords(x.p)))
	}
	for _, x := range w.missed {
		parts = append(parts, fmt.Sprintf("%s did not reach the target on %s, where %s did (how much later is unknown: a longer run would tell)",
			L, seedList(x.seeds), x.name))
	}
	if len(w.few) > 0 {
		parts = append(parts, fmt.Sprintf("%s and %s share fewer than two seeds", L, orList(w.few)))
	}
	return strings.Join(parts, "; ")
}

// Text is the advantage as a ratio with its interval, e.g. "1.35×, 95%
// interval 1.2–1.52×"; below 1 when the other paradigm is ahead.
func (e *Effect) Text() string {
	r := func(v float64) string { return fmt.Sprintf("%.3g", v) }
	if e.Lo == nil {
		return r(e.Ratio) + "×"
	}
	return fmt.Sprintf("%s×, 95%% interval %s–%s×", r(e.Ratio), r(*e.Lo), r(*e.Hi))
}

func pWords(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("= %.3g", p)
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

func seedList(seeds []uint64) string {
	var xs []string
	for _, s := range seeds {
		xs = append(xs, fmt.Sprint(s))
	}
	if len(xs) == 1 {
		return "seed " + xs[0]
	}
	return "seeds " + strings.Join(xs, ", ")
}
