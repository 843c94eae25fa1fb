// Package report turns the run summaries of a `pacer compare` into files a
// person reads at a glance: report.html, one PNG per plot, summary.md and
// summary.json.
//
// Use:
//
//	sc := report.Scenario{
//		Title:       "DSSP paper: heterogeneous pair",
//		Description: "Two workers, one twice as fast, MLP on Fashion-MNIST.",
//		Command:     "pacer compare --paradigms 'bsp;ssp:s=3;dssp:sl=3,su=15' --target 0.85 --out out",
//		Target:      0.85,
//	}
//	paths, err := report.Write("out", sc, runs) // runs []runstats.Run, one per paradigm
//	name, sentence := report.Winner(sc, runs)   // for a terminal summary line
//
// Implementation notes:
//
//   - Everything is rendered in memory before anything is written, so bad
//     input (no runs, NaN, a duplicate paradigm, a curve that goes back in
//     time) returns an error wrapping ErrInput and leaves the directory
//     untouched. Files are written via a temporary name and a rename.
//   - Determinism: the same runs give the same bytes in every file. Nothing
//     reads the clock or a random source; gonum's image renderer and
//     image/png are deterministic; encoding/json is used on the runs as given.
//     The tests check byte equality, and that each plot changes when its data
//     does, so the equality check cannot pass vacuously.
//   - Winner is a race to the target when the runs trained a model (the curve
//     decides; time_to_target is used only when there is no curve), a ranking
//     by final accuracy when no target is known, and by throughput for
//     simulated runs. Ties are compared with a 1e-9 relative tolerance and
//     broken by final accuracy, then by the order given; the sentence says
//     it was a tie. Past three other runs the sentence names only the next
//     best and the last, to stay readable.
//   - One table model (summaryTable) feeds both summary.md and the HTML
//     table, so the two never disagree. Accuracy columns are left out for
//     simulated runs, where they would be empty.
//   - Plots: each paradigm keeps its colour (by position) in every plot. Bar
//     plots are horizontal because paradigm specs are long. The waiting plot
//     shows one bar per worker up to 40 bars, else the least / median / most
//     waiting worker per paradigm. The staleness plot uses shares, not counts,
//     and switches to a log axis when shares span more than 50×; the log axis
//     is log10 values on a linear axis, since gonum's LogScale misplaces a
//     rotated axis label and panics on zero.
//   - Accuracy against epochs (accuracy_vs_epoch.png), training loss
//     against time (loss_vs_time.png) and the workers' mini-batch loss
//     against time (batch_loss_vs_time.png) are drawn only when the runs
//     record them (CurveEpochs, TrainLoss, BatchLoss), so older summaries
//     give the same plots as before; the medians over seeds are taken
//     evaluation by evaluation, as for accuracy against time (an
//     evaluation without a mini-batch loss, null in BatchLoss, is skipped).
//     A loss axis is cut below its first point's loss, which all
//     paradigms share. The mini-batch loss is a plot of its own, not a
//     second line in the training loss's: it is a different quantity
//     (each worker's batches at the weights it read, averaged over a
//     window), and the live modes record only it.
//   - report.html embeds the plots as base64 data URIs (as trusted attributes,
//     because html/template would escape every '+'), has inline CSS and no
//     external reference, so it opens offline. All user text (titles, names,
//     the command) goes through html/template escaping; summary.md escapes
//     Markdown syntax in the same text.
package report
