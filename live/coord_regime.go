package live

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/pacer-ps/pacer/live/proto"
)

// This file: --paradigm auto's regime on disk, written ahead of every
// switch. The coordinator's state file lags (it is written with shard 0's
// checkpoints), so a coordinator restored from it alone could name an
// older regime than the shards and workers hold: they ignore a generation
// at or below theirs, and a later switch of its own would reuse one they
// had seen, leaving a shard under another rule than the gate's. Written
// before any shard is told, this file names the newest regime anyone may
// hold; a restored coordinator carries on under it and tells it again.

// regimeFile is the regime's file in dir.
func regimeFile(dir string) string { return filepath.Join(dir, "auto-regime.json") }

// maxRegimeFile bounds the file: a few numbers and two paradigm specs.
const maxRegimeFile = 16 << 10

// regimeRecord is the file's content: the job it belongs to (as the state
// file names it), the regime, and the pushes counted when it began.
type regimeRecord struct {
	Paradigm string       `json:"paradigm"`
	Workers  int          `json:"workers"`
	Target   int64        `json:"target"`
	Regime   proto.Regime `json:"regime"`
	Pushes   int64        `json:"pushes"`
}

// saveRegime writes r, begun at pushes, to dir before any shard hears of
// it (the coordinator's lock is held: every worker is parked, so the
// write stalls nobody).
func (c *Coordinator) saveRegime(dir string, r proto.Regime, pushes int64) error {
	b, err := json.Marshal(regimeRecord{Paradigm: c.job.Job.Spec.String(), Workers: c.k, Target: c.target, Regime: r, Pushes: pushes})
	if err != nil {
		return err
	}
	if err := writeSynced(dir, ".auto-regime-*.tmp", regimeFile(dir), b); err != nil {
		return fmt.Errorf("live: auto's regime: %w", err)
	}
	return nil
}

// readRegime reads dir's regime record, checked against the job; (nil,
// nil) when there is none.
func (c *Coordinator) readRegime(dir string) (*regimeRecord, error) {
	var rec regimeRecord
	if ok, err := readJSON(regimeFile(dir), "auto's regime", maxRegimeFile, &rec); !ok {
		return nil, err
	}
	if rec.Paradigm != c.job.Job.Spec.String() || rec.Workers != c.k || rec.Target != c.target {
		return nil, fmt.Errorf("live: auto's regime %s is another job's (%s, %d workers, %d pushes; this job: %s, %d workers, %d pushes)",
			regimeFile(dir), rec.Paradigm, rec.Workers, rec.Target, c.job.Job.Spec.String(), c.k, c.target)
	}
	if rec.Regime.Gen == 0 || rec.Pushes < 0 {
		return nil, fmt.Errorf("live: auto's regime %s: generation %d from push %d is not one a switch writes", regimeFile(dir), rec.Regime.Gen, rec.Pushes)
	}
	return &rec, nil
}

// newerRegime puts rec into st when it is newer than the regime st names
// (the state file lagged a switch).
func newerRegime(st *coordState, rec *regimeRecord) {
	if rec == nil || (st.Regime != nil && st.Regime.Gen >= rec.Regime.Gen) {
		return
	}
	r := rec.Regime
	st.Regime, st.RegimePushes, st.regimeAhead = &r, rec.Pushes, true
}
