package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
)

// This file: the coordinator's state on disk, beside shard 0's checkpoint,
// so that shard 0 killed and restarted with --restore carries on the job
// it hosted: the same length (the pushes counted so far), the same
// membership, each worker's clock at the gate, the running totals of the
// workers' mini-batch losses (batch_loss's windows span the restart).
//
// The file is written with shard 0's checkpoints (every interval and at
// shutdown), so it lags the coordinator it describes. What happened since
// is learned again from the workers, which redial and say where they
// stand (proto.WorkerState): the clock reports the coordinator answered since
// (counted again, so no push is lost from the job's count nor counted
// twice), the gate clock it last named to them, and whether they wait
// for a release. The gate is rebuilt on those clocks: its rule is the
// paradigm's, its adaptive state (DSSP's intervals, ElasticBSP's
// barriers) starts afresh.

// coordStateVersion is the file's format; another is refused.
const coordStateVersion = 1

// coordFile is the coordinator's state file in dir.
func coordFile(dir string) string { return filepath.Join(dir, "coordinator.json") }

// coordState is the file's content.
type coordState struct {
	Version int `json:"version"`
	// Job ties the file to its job: a file of another job is refused.
	Paradigm string `json:"paradigm"`
	Workers  int    `json:"workers"`
	Target   int64  `json:"target"`

	Pushes int64 `json:"pushes"`
	Done   bool  `json:"done"`
	// Started and First are the wall times (Unix ns) the first
	// coordinator started and first heard a worker: a restarted one
	// carries on its predecessor's clock (the gate's times, the bound on
	// a worker's reported seconds, the job's duration).
	Started        int64   `json:"started"`
	First          int64   `json:"first,omitempty"`
	Removed        int64   `json:"removed"`
	NeverConnected int64   `json:"never_connected"`
	Joined         int64   `json:"joined"`
	Refused        int64   `json:"refused"`
	Releases       int64   `json:"releases"`
	MaxGap         int64   `json:"max_gap"`
	ControllerCall int64   `json:"controller_calls"`
	ControllerSecs float64 `json:"controller_seconds"`
	Restarts       int64   `json:"restarts"`
	// Barriers and BarrierPushes: ElasticBSP apply=local's count of the
	// gate's barriers (the shards' versions) and the pushes at the latest.
	Barriers      uint64 `json:"barriers,omitempty"`
	BarrierPushes int64  `json:"barrier_pushes,omitempty"`
	// BatchLossSum and BatchLosses are the workers' reported mini-batch
	// losses, totalled (proto.CoordStats.BatchLossSum); Incarnation is the
	// writer's name (proto.CoordStats.RestoredFrom). Absent from a file written
	// before them: the totals start again from zero.
	BatchLossSum float64 `json:"batch_loss_sum,omitempty"`
	BatchLosses  int64   `json:"batch_losses,omitempty"`
	Incarnation  uint64  `json:"incarnation,omitempty"`
	// Regime (--paradigm auto): the rule in force once a switch was made,
	// and the pushes counted when it began (the next switch's base).
	Regime       *proto.Regime `json:"regime,omitempty"`
	RegimePushes int64         `json:"regime_pushes,omitempty"`
	// regimeAhead: Regime is auto's regime file's, newer than this file
	// (newerRegime): its push count may be ahead of Pushes, which the
	// workers' resync brings up to date.
	regimeAhead bool

	Members []memberState `json:"members"`
}

// memberState is one worker id's record.
type memberState struct {
	State  int    `json:"state"` // unseen, live, removed
	Inc    uint64 `json:"inc,omitempty"`
	Seq    uint64 `json:"seq"`
	Clock  int64  `json:"clock"`
	Pushes int64  `json:"pushes"`
	WaitUS uint64 `json:"wait_us"`
	BusyUS uint64 `json:"busy_us"`
	// Displaced: the processes a newer one under the id replaced (their
	// Hellos stay refused after a restart).
	Displaced []uint64 `json:"displaced,omitempty"`
}

// snapshotState copies the coordinator's state for the file.
func (c *Coordinator) snapshotState() *coordState {
	c.mu.Lock()
	defer c.mu.Unlock()
	gs := c.gate.Stats()
	nRem, nNever, nJoin := c.ms.Counts()
	st := &coordState{Version: coordStateVersion, Paradigm: c.job.Job.Spec.String(), Workers: c.k, Target: c.target,
		Pushes: c.ms.Pushes(), Done: c.ms.Done(), Removed: nRem, NeverConnected: nNever, Joined: nJoin, Refused: c.refused,
		Releases: c.base.Releases + gs.Releases, MaxGap: max(c.base.MaxGap, gs.MaxGap),
		ControllerCall: c.base.ControllerCalls + gs.ControllerCalls, ControllerSecs: c.ctrl.Seconds(), Restarts: c.restarts,
		Barriers: c.bar, BarrierPushes: c.barPushes, BatchLossSum: c.lossSum, BatchLosses: c.lossN, Incarnation: c.inc}
	st.Started = c.start.UnixNano()
	if st.Regime = c.regime(); st.Regime != nil {
		st.RegimePushes = c.auto.regPushes
	}
	if first := c.ms.First(); !first.IsZero() {
		st.First = first.UnixNano()
	}
	for p, m := range c.members {
		r := c.ms.Member(p)
		st.Members = append(st.Members, memberState{State: int(r.State), Inc: r.Inc, Seq: r.Seq, Clock: c.gate.Clock(p),
			Pushes: r.Pushes, WaitUS: m.waitUS, BusyUS: m.busyUS, Displaced: r.Displaced})
	}
	return st
}

// saveState writes the coordinator's state to dir atomically (a
// temporary file, fsynced, renamed).
func (c *Coordinator) saveState(dir string) error {
	st := c.snapshotState()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := writeSynced(dir, ".coordinator-*.tmp", coordFile(dir), b); err != nil {
		return fmt.Errorf("live: coordinator state: %w", err)
	}
	return nil
}

// writeSynced writes b to path atomically: a temporary file in dir named
// by pattern, fsynced, renamed, and the directory fsynced.
func writeSynced(dir, pattern, path string, b []byte) error {
	// The directory is made as a checkpoint makes it: the first write may
	// come before shard 0's first checkpoint.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// removeStaleCoordState deletes temporary files a kill mid-write left
// (the state's and auto's regime's).
func removeStaleCoordState(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		for _, pat := range []string{".coordinator-*.tmp", ".auto-regime-*.tmp"} {
			if ok, _ := filepath.Match(pat, e.Name()); ok && !e.IsDir() {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// The coordinator's state file is bounded by the ids it lists: a fixed
// part (about 20 counters) under maxCoordFixed, and a record per worker id
// under maxMemberBytes (seven numbers and up to membership's 8 displaced
// processes, each at most 20 digits: TestCoordStateBound writes the
// largest), at most maxWorkers ids. A larger file is not one the
// coordinator wrote, and is refused before it is read (32 MiB and 4 KiB).
const (
	maxCoordFixed   = 4 << 10
	maxMemberBytes  = 512
	maxCoordStateSz = maxCoordFixed + maxMemberBytes*maxWorkers
)

// readCoordState reads dir's coordinator state; (nil, nil) when there is
// none.
func readCoordState(dir string) (*coordState, error) {
	var st coordState
	if ok, err := readJSON(coordFile(dir), "coordinator state", maxCoordStateSz, &st); !ok {
		return nil, err
	}
	return &st, nil
}

// readJSON decodes the file at path, read only if it is at most limit
// bytes, into v; false with a nil error when there is no file. what names
// the file in errors.
func readJSON(path, what string, limit int64, v any) (bool, error) {
	b, err := filecap.Read(path, what+" file", limit)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("live: %s: %w", what, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("live: %s %s: %w", what, path, err)
	}
	return true, nil
}

// restore makes the coordinator carry on from st at now (checked against
// the job first): the counts, the membership, every clock. Workers that
// were live get the startup allowance to reconnect.
func (c *Coordinator) restore(now time.Time, st *coordState) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case st.Version != coordStateVersion:
		return fmt.Errorf("live: coordinator state of format %d, this build reads %d", st.Version, coordStateVersion)
	case st.Paradigm != c.job.Job.Spec.String() || st.Workers != c.k || st.Target != c.target:
		return fmt.Errorf("live: coordinator state of another job (%s, %d workers, %d pushes; this job: %s, %d workers, %d pushes)",
			st.Paradigm, st.Workers, st.Target, c.job.Job.Spec.String(), c.k, c.target)
	case st.BatchLosses < 0 || math.IsNaN(st.BatchLossSum) || math.IsInf(st.BatchLossSum, 0) || st.BatchLossSum < 0 ||
		(st.BatchLosses == 0 && st.BatchLossSum != 0):
		// Each loss is finite and non-negative (reportedLoss), so are
		// their sum and count, and no losses sum to 0.
		return fmt.Errorf("live: coordinator state: batch loss totals of %d reports summing to %g are not ones", st.BatchLosses, st.BatchLossSum)
	}
	saved := membership.Saved{Pushes: st.Pushes, Done: st.Done, Removed: st.Removed, Never: st.NeverConnected, Joined: st.Joined}
	if st.First > 0 {
		saved.First = time.Unix(0, st.First)
	}
	for p, ms := range st.Members {
		if ms.Clock < 0 {
			return fmt.Errorf("live: coordinator state: worker %d's record is not one (state %d, clock %d, pushes %d)", p, ms.State, ms.Clock, ms.Pushes)
		}
		saved.Members = append(saved.Members, membership.Member{State: membership.State(ms.State), Inc: ms.Inc, Seq: ms.Seq, Pushes: ms.Pushes, Displaced: ms.Displaced})
	}
	started := st.Started > 0 && st.Started < now.UnixNano()
	if err := c.ms.Restore(now, saved, started); err != nil {
		return fmt.Errorf("live: coordinator state: %w", err)
	}
	c.refused = st.Refused
	c.base.Releases, c.base.MaxGap, c.base.ControllerCalls = st.Releases, st.MaxGap, st.ControllerCall
	c.ctrl = time.Duration(st.ControllerSecs * float64(time.Second))
	c.restarts = st.Restarts + 1
	c.lossSum, c.lossN, c.from = st.BatchLossSum, st.BatchLosses, st.Incarnation
	c.restoredSum, c.restoredN = st.BatchLossSum, st.BatchLosses
	// The rebuilt gate counts its barriers from zero.
	c.bar, c.barBase, c.barPushes = st.Barriers, st.Barriers, st.BarrierPushes
	if started {
		c.start = time.Unix(0, st.Started)
	}
	if err := c.restoreRegime(st); err != nil {
		return err
	}
	c.members = c.members[:0]
	c.grow()
	t := c.since(now)
	// Every id joins the rebuilt gate (ids past K first), then those that
	// were removed leave it again and the others take their clocks.
	for p := c.k; p < len(c.members); p++ {
		c.gate.Join(t, p, nil)
	}
	for p, ms := range st.Members {
		c.members[p].waitUS, c.members[p].busyUS = ms.WaitUS, ms.BusyUS
		if ms.State == removed {
			c.gate.Leave(t, p, nil)
		} else {
			c.gate.SetClock(t, p, ms.Clock, nil)
		}
	}
	c.log.Info("coordinator restored", "pushes", c.ms.Pushes(), "target", c.target, "workers", len(c.members), "done", c.ms.Done(), "restarts", c.restarts, "barriers", c.bar)
	return nil
}

// resync takes a restored coordinator's first news of worker p's process
// since the restart (lock held), once the membership has counted the
// reports the old coordinator answered after its file was written (a):
// the gate takes the clock the worker was last told; a worker waiting for
// its release is decided on again by the paradigm's rule, as at that push.
// The releases are appended to out.
func (c *Coordinator) resync(now time.Time, p int, ws proto.WorkerState, a membership.Admit, out []int) []int {
	if c.blind && ws.AgeUS > 0 {
		// Without the file the job's start is unknown: it is at least
		// as old as this worker (which bounds what it reports), capped
		// at a year.
		age := time.Duration(min(ws.AgeUS, int64(365*24*time.Hour/time.Microsecond))) * time.Microsecond
		if at := now.Add(-age); at.Before(c.start) {
			c.start = at
		}
	}
	if !a.ResyncGate {
		return out
	}
	t := c.since(now)
	if ws.Held && ws.Clock > 0 {
		out = c.gate.SetClock(t, p, ws.Clock-1, out)
		return c.gate.Pushed(t, p, out)
	}
	return c.gate.SetClock(t, p, ws.Clock, out)
}

// restoreBlind marks every id as restored when shard 0 restarts with
// --restore but finds no state file (killed before its first write): the
// counts start from zero, and each worker that redials is taken at its
// word, its process's answered reports counted and its clock adopted, so
// the job goes on (its length then misses only the pushes of processes
// that did not come back).
func (c *Coordinator) restoreBlind(rec *regimeRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restarts, c.blind = 1, true
	c.ms.RestoreBlind()
	// auto's regime, which its own file names even without the state's.
	st := &coordState{}
	newerRegime(st, rec)
	return c.restoreRegime(st)
}
