// Package summary is a comparison's summary.json: what ran, every run,
// the statistics over seeds per paradigm and the verdict. It reads the
// per-run records (runstats) that sim, train and the live runtime write;
// those know nothing of comparisons, scenarios or races.
package summary

import "github.com/pacer-ps/pacer/runstats"

// Run is the per-run record: a summary's runs are exactly what each mode
// wrote, so the statistics read them under their own name.
type Run = runstats.Run
