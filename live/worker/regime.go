package worker

import (
	"encoding/json"
	"fmt"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
)

// This file: --paradigm auto on a worker. The coordinator parks every
// worker at the gate, switches the shards, and releases them with the new
// regime (a Release with proto.FlagSwitch; a worker that reconnects reads
// it from its JobInfo): the worker takes the new rule's puller and starts
// from a full pull at the regime's base clock.

// noteRegime keeps the newest regime the coordinator named (set by the
// connection's goroutine or a redial, taken by the main loop).
func (w *Worker) noteRegime(r *proto.Regime) {
	if r == nil {
		return
	}
	w.regMu.Lock()
	if w.regNext == nil || r.Gen > w.regNext.Gen {
		c := *r
		w.regNext = &c
	}
	w.regMu.Unlock()
}

// noteSwitch reads a switch release's regime.
func (w *Worker) noteSwitch(body []byte) {
	var r proto.Regime
	if err := json.Unmarshal(body, &r); err != nil {
		w.log.Error("a switch release without a regime: ignored", "worker", w.curID(), "err", err)
		return
	}
	w.noteRegime(&r)
}

// regimeSpec is r's rule, which must be one of the job's candidates.
func (w *Worker) regimeSpec(r *proto.Regime) (paradigm.Spec, error) {
	j := &w.job.Job
	sp, err := paradigm.Parse(r.Paradigm)
	if err == nil && !j.Spec.HasCandidate(sp) {
		err = fmt.Errorf("not one of the job's auto candidates (%s)", j.Spec)
	}
	if err != nil {
		return sp, fmt.Errorf("live: worker %d: the coordinator's regime %d, %q: %w", w.id, r.Gen, r.Paradigm, err)
	}
	return sp, nil
}

// adopt moves the main loop to a newer regime, if the coordinator named
// one: the rule's puller, the base clock, a full pull next.
func (w *Worker) adopt(st *state) error {
	w.regMu.Lock()
	r := w.regNext
	w.regMu.Unlock()
	if r == nil || r.Gen <= st.gen {
		return nil
	}
	sp, err := w.regimeSpec(r)
	if err != nil {
		return err
	}
	j := &w.job.Job
	pl, err := paradigm.NewPuller(sp, paradigm.Config{Workers: j.Workers, Shards: j.Shards})
	if err != nil {
		return err
	}
	w.log.Info("paradigm switched", "worker", w.id, "from", st.spec.String(), "to", sp.String(), "clock", max(st.clock, r.Base), "generation", r.Gen)
	st.pl, st.spec, st.gen = pl, sp, r.Gen
	// The base is above every clock of the old rule; a worker that
	// rejoined after the switch holds the gate's clock, at or past it.
	st.clock, st.first = max(st.clock, r.Base), true
	w.ws.Clock = int64(st.clock)
	w.mClock.Store(int64(st.clock))
	return nil
}
