// Package membership is the coordinator's record of a live job's worker
// ids and of its length, as a state machine on an injected clock: every
// method takes the time it is called at and returns what it decided (an
// id admitted, joined again or removed; a push counted or answered as a
// retry; the job's end), and nothing here reads the wall clock, sleeps or
// touches a connection. The coordinator (package live) carries the
// decisions out (the gate, the connections, the logs); its event loop is
// the one place that reads the clock. The rules are tested by the traces
// in testdata/.
//
// An id is unseen (never connected), live, or removed. A live id is
// removed when its worker has been silent for the heartbeat timeout (a
// starting process, which has not pushed yet, for its startup allowance);
// an unseen one when the startup grace has passed. A removed id comes back
// live when its worker is heard again, under the same process or a new
// one. Each process under an id is told apart by its incarnation (Inc),
// and counts its pushes (Seq) from 1, so a report repeated because its
// answer was lost is counted once. Ids are keyed by incarnation: a removed
// join's id goes to a later join when no other is free, and its earlier
// process, if it comes back, is given a fresh id.
package membership

import (
	"fmt"
	"slices"
	"time"
)

// State is an id's state.
type State int

const (
	Unseen  State = iota // no worker has connected under the id yet
	Live                 // in the job: the gate waits for it as its paradigm says
	Removed              // out of the job until its worker is heard again
)

func (s State) String() string {
	switch s {
	case Unseen:
		return "unseen"
	case Live:
		return "live"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// StartupTimeouts is a starting process's silence allowance, in heartbeat
// timeouts (capped by the startup grace): loading its data set on a busy
// machine can starve its heartbeats for longer than the timeout.
const StartupTimeouts = 4

// MinGrace and MaxGrace bound the default startup grace (Timing): at least
// MinGrace, so that processes a launcher starts together on a busy machine
// all connect in time; at most MaxGrace (unless the timeout is longer), so
// that a worker that dies before its first push, or never connects, is
// removed within 30 s: MaxGrace plus two sweep periods at the default
// timeout (docs/protocol.md "Heartbeats on a busy machine").
const (
	MinGrace = 20 * time.Second
	MaxGrace = 25 * time.Second
)

// Timing returns the startup grace and the sweep's period for a heartbeat
// timeout: the grace is four timeouts within [MinGrace, MaxGrace], and
// never less than one timeout; the sweep runs eight times per timeout (at
// least every 10 ms).
func Timing(timeout time.Duration) (grace, every time.Duration) {
	return max(min(max(StartupTimeouts*timeout, MinGrace), MaxGrace), timeout), max(timeout/8, 10*time.Millisecond)
}

// BeatPeriod is how often a worker beats for a heartbeat timeout: four
// times per timeout, and at least once a second, so that a worker starved
// of CPU has lost at most a second of its timeout to the beat it had not
// sent yet when the starving began (at least every 10 ms).
func BeatPeriod(timeout time.Duration) time.Duration {
	return max(min(timeout/4, time.Second), 10*time.Millisecond)
}

// Config sets up a Table.
type Config struct {
	Workers int           // the job's K workers: ids 0..K−1, unseen at the start
	IDCap   int           // ids a join (id −1) may take: 0..IDCap−1
	Timeout time.Duration // a live worker silent for longer is removed
	Grace   time.Duration // an unseen id is removed after this; it also caps a starting process's allowance
	Every   time.Duration // the sweep's period (a sweep later than two is a stall of the coordinator)
	Target  int64         // the counted pushes that end the job
}

// Member is one id's record.
type Member struct {
	State    State
	LastSeen time.Time // when its worker was last heard (a restored id: the restore)
	Inc      uint64    // the process under the id (0: none known)
	Seq      uint64    // that process's last counted report
	Pushes   int64     // pushes counted under the id, over all its processes
	// Connected: a worker has said Hello under the id since this
	// coordinator started. Restored: carried over by a restarted
	// coordinator and not heard from since (its first Hello resyncs).
	Connected, Restored bool
	// Displaced lists the processes a newer one under the id replaced
	// (the latest maxDisplaced): their Hellos are refused.
	Displaced []uint64
}

// maxDisplaced bounds the displaced processes an id remembers: a crash
// loop under one id then costs a few words, and a duplicate started
// alongside is among the last few.
const maxDisplaced = 8

// Table is the membership and the job's count of pushes.
type Table struct {
	cfg      Config
	ms       []Member
	graceEnd time.Time // unseen ids are removed after this
	swept    time.Time // the last sweep
	deferred bool      // the last sweep came late and removed no one
	pushes   int64
	done     bool
	first    time.Time // the first Hello
	end      time.Time
	// removed, never and joined count removals (never: of ids never
	// connected) and (re)joins.
	removed, never, joined int64
}

// New returns a Table for the job's K workers, every id unseen, started at now.
func New(cfg Config, now time.Time) *Table {
	return &Table{cfg: cfg, ms: make([]Member, cfg.Workers), graceEnd: now.Add(cfg.Grace)}
}

// Code says why a frame is refused.
type Code int

const (
	BadRequest  Code = iota + 1 // not a frame this job takes
	Unavailable                 // no id left for a join
	Finished                    // the job has ended
)

// Refusal is a refused Hello or report.
type Refusal struct {
	Code Code
	Msg  string
}

func (r *Refusal) Error() string { return r.Msg }

func refuse(code Code, format string, a ...any) error {
	return &Refusal{Code: code, Msg: fmt.Sprintf(format, a...)}
}

// Process is what a dialling worker says of itself.
type Process struct {
	Inc   uint64 // its incarnation (0: a worker that does not say)
	Seq   uint64 // the reports it has made
	Acked uint64 // the reports it has had answered
}

// Admit is a Hello's outcome.
type Admit struct {
	ID int
	// Joined: the id was removed (or is new) and joins the gate again.
	Joined bool
	// Returning: a process other than the one known under the id (a
	// worker killed and started again): its reports count from 1.
	Returning bool
	// Resync: a restored id's own process, the first news of it since the
	// restart; ResyncGate: the gate takes the clock it names (it is live,
	// and the file had not counted a report it never had answered).
	Resync, ResyncGate bool
	// Reconnect: a new connection of the live id's process: a release
	// sent to the old one may be lost.
	Reconnect bool
	// Displaced: another process had the id, and this one replaces it (a
	// worker started again, or a duplicate): the older process's
	// connection and anything it still sends are refused.
	Displaced bool
	// Fresh: the process of a removed join whose id (Was) went to
	// another join, given a new one (ID): it goes on as a join under it,
	// from a full pull at the gate's clock for the id.
	Fresh bool
	Was   int
	// Counted: pushes this Hello counted (answered before a restart, or
	// reached the shards before a removal); Finished: they ended the job
	// (the coordinator tells every worker, this one too).
	Counted  int64
	Finished bool
}

// Hello admits a worker's control connection under id want (−1: the first
// id never seen, else a new one up to IDCap).
func (t *Table) Hello(now time.Time, want int, pr Process) (Admit, error) {
	if t.done {
		return Admit{}, refuse(Finished, "the job has finished")
	}
	id := want
	switch {
	case id < -1:
		return Admit{}, refuse(BadRequest, "worker id %d: give an id of the job, or −1 to join", id)
	case id == -1:
		id = t.free()
		if id < 0 {
			return Admit{}, refuse(Unavailable, "no worker id is free: the job's %d ids are live or kept for its own %d workers (a join takes a new id, or a removed join's)", t.cfg.IDCap, t.cfg.Workers)
		}
	case id >= len(t.ms):
		return Admit{}, refuse(BadRequest, "worker id %d was never admitted: this job's ids are 0..%d (--id −1 joins as a new one)", id, len(t.ms)-1)
	}
	if id == len(t.ms) {
		t.ms = append(t.ms, Member{State: Removed}) // a new id joins below
	}
	m := &t.ms[id]
	stale := pr.Inc != 0 && slices.Contains(m.Displaced, pr.Inc)
	if !stale && want >= t.cfg.Workers && pr.Inc != 0 && pr.Seq > 0 && m.Inc != 0 && m.Inc != pr.Inc && !m.Restored {
		// A process with pushes behind it, under a join's id another
		// process has: displaced from it longer ago than Displaced
		// remembers (a process started again under the id has pushed
		// nothing yet). Taken for a returning one, it would displace the
		// id's live process and find its reports numbered from 0.
		stale = true
	}
	if stale {
		switch {
		case want < 0:
			// A join given back a removed join's id it had itself been
			// displaced from: it is the id's process again.
			m.Displaced = slices.DeleteFunc(m.Displaced, func(i uint64) bool { return i == pr.Inc })
		case id >= t.cfg.Workers:
			// A removed join's process, back after its id went to
			// another join: ids are keyed by incarnation, so it joins
			// again under a fresh id rather than take back the one
			// another process now has.
			return t.fresh(now, id, pr)
		default:
			// Two processes under one id (a second worker started with
			// the same --id): the newer one has it; the older is told
			// why, and stops rather than redial, which would take the id
			// back and reset the count of the reports it numbers.
			return Admit{}, refuse(BadRequest, "worker id %d was taken over by a newer process (is another worker running with --id %d?): this one stops", id, id)
		}
	}
	// A join given a removed join's id is a new worker, not that one
	// returning, though it displaces that one's process.
	a := Admit{ID: id, Returning: m.Inc != 0 && m.Inc != pr.Inc && want >= 0}
	if m.Restored {
		m.Restored = false
		if a.Returning && pr.Inc != 0 && pr.Acked > 0 {
			// A process that returned after the state file was written
			// and was answered by the coordinator before its restart:
			// the file does not know it, but its reports count from its
			// own first, as a process the file had seen at none.
			m.Seq, a.Returning = 0, false
		}
		if !a.Returning && pr.Inc != 0 {
			// The same process as before the coordinator's restart.
			a.Resync, m.Connected, m.Inc = true, true, pr.Inc
			t.resync(now, m, pr, &a)
		}
	}
	if m.Inc != pr.Inc {
		if m.Inc != 0 && pr.Inc != 0 {
			// The newer process takes the id: the older one, alive or not,
			// is displaced.
			m.Displaced = append(m.Displaced, m.Inc)
			if len(m.Displaced) > maxDisplaced {
				m.Displaced = m.Displaced[1:]
			}
			a.Displaced = true
		}
		m.Inc, m.Seq = pr.Inc, 0
	} else if pr.Seq > m.Seq && m.State == Removed {
		// The same process, removed while its last report was
		// outstanding: that push reached the shards before the removal
		// and counts toward the job, but not at the gate, where the
		// worker joins afresh (its resent report is then answered as a
		// retry).
		n := int64(pr.Seq - m.Seq)
		m.Pushes += n
		t.pushes += n
		a.Counted += n
		m.Seq = pr.Seq
		if t.pushes >= t.cfg.Target {
			// That push was the job's last: the job ends here, as at a
			// report (left running, it ended only at the next counted
			// report, one round late, and a worker left alone past the
			// target would push on).
			t.done, t.end, a.Finished = true, now, true
		}
	}
	switch {
	case m.State == Removed:
		m.State = Live
		t.joined++
		a.Joined = true
	case m.State == Live && m.Connected && !a.Returning:
		a.Reconnect = true
	case m.State == Unseen:
		m.State = Live
	}
	if t.first.IsZero() {
		t.first = now
	}
	m.Connected, m.LastSeen = true, now
	return a, nil
}

// fresh admits the process of a removed join whose id (old) went to
// another join: as a join (id −1), under the id free() gives, within the
// cap like any join's, so however many processes come and go the job
// never has more than IDCap ids. Its reports go on from its own count: a
// report outstanding under its old id is answered as a retry, not
// counted, since the old id's record of what it counted went with the id
// (counted there before, it would count twice).
func (t *Table) fresh(now time.Time, old int, pr Process) (Admit, error) {
	a, err := t.Hello(now, -1, Process{Inc: pr.Inc})
	if err != nil {
		if r, ok := err.(*Refusal); ok && r.Code == Unavailable {
			return Admit{}, refuse(Unavailable, "worker id %d was given to another joining worker after this one was removed, and no other is free: %s", old, r.Msg)
		}
		return Admit{}, err
	}
	t.ms[a.ID].Seq = pr.Seq
	a.Fresh, a.Was = true, old
	return a, nil
}

// free is the id a join (id −1) takes: the first id no worker has
// connected under, else a new one below the cap, else the removed join id
// (one past the job's K) silent for longest: the cap counts the ids in use,
// so joins that came and went (a crash loop, a burst of short-lived
// workers) do not lock later ones out. −1: every id is in use.
func (t *Table) free() int {
	for p := range t.ms {
		if t.ms[p].State == Unseen && !t.ms[p].Connected {
			return p
		}
	}
	if len(t.ms) < t.cfg.IDCap {
		return len(t.ms)
	}
	id := -1
	for p := t.cfg.Workers; p < len(t.ms); p++ {
		if m := &t.ms[p]; m.State == Removed && (id < 0 || m.LastSeen.Before(t.ms[id].LastSeen)) {
			id = p
		}
	}
	return id
}

// resync takes a restored id's process at its word: the reports the old
// coordinator answered after its file was written are counted (the job
// may end on them); a report the file counted but whose answer the worker
// never got leaves the file's clock in force (the worker's resent report
// is a retry).
func (t *Table) resync(now time.Time, m *Member, pr Process, a *Admit) {
	if pr.Acked < m.Seq {
		return
	}
	if pr.Acked > m.Seq {
		n := int64(pr.Acked - m.Seq)
		m.Pushes += n
		t.pushes += n
		a.Counted += n
		m.Seq = pr.Acked
		if t.pushes >= t.cfg.Target && !t.done {
			// The job ended before the crash: its next report is told so.
			t.done, t.end, a.Finished = true, now, true
		}
	}
	a.ResyncGate = m.State != Removed
}

// Removal is an id a sweep removed.
type Removal struct {
	ID     int
	Never  bool          // it never connected (removed for the startup grace)
	Silent time.Duration // else how long it had been silent
}

// Sweep is a sweep's outcome.
type Sweep struct {
	// Stalled: the sweep came late (Gap since the last), so it removed no
	// one (the coordinator's own stall, not the workers').
	Stalled bool
	Gap     time.Duration
	Removed []Removal
}

// Sweep removes every live id silent for longer than its limit, and the
// unseen ids once the startup grace has passed.
//
// A sweep that comes late measures a stall of the coordinator itself (a
// loaded machine, a long GC pause): heartbeats that arrived meanwhile may
// not have been read yet, so it removes no one and leaves the decision to
// the next sweep, by which time the connections have been served. Only
// one sweep in a row defers, so a coordinator that is always late still
// removes dead workers, one period later.
func (t *Table) Sweep(now time.Time) Sweep {
	if t.done {
		// The job has ended: workers stop beating as they exit, which is
		// not a failure (counted as one, a finished worker read as removed).
		return Sweep{}
	}
	gap := now.Sub(t.swept)
	late := !t.swept.IsZero() && gap > 2*t.cfg.Every && !t.deferred
	t.swept, t.deferred = now, late
	if late {
		return Sweep{Stalled: true, Gap: gap}
	}
	var out Sweep
	for p := range t.ms {
		m := &t.ms[p]
		// A restored id that has not redialled has no connection; its
		// silence counts from the restore (LastSeen): a worker that died
		// while the coordinator was down never redials, and BSP would
		// wait for it forever.
		late := m.State == Live && (m.Connected || m.Restored) && now.Sub(m.LastSeen) > t.Limit(p)
		never := m.State == Unseen && now.After(t.graceEnd)
		if !late && !never {
			continue
		}
		m.State = Removed
		t.removed++
		r := Removal{ID: p, Never: never}
		if never {
			// No connection ever came under this id: there is no silence
			// to measure, only the startup grace.
			t.never++
		} else {
			r.Silent = now.Sub(m.LastSeen)
		}
		out.Removed = append(out.Removed, r)
	}
	return out
}

// Limit is how long live id p may be silent: the heartbeat timeout, or
// while its process is still starting or a restored id has not
// redialled, the startup allowance, StartupTimeouts timeouts within the
// startup grace. A process is starting until its first counted report
// (Seq is 0 for each new process under the id): a worker killed and
// started again loads its data set again, whatever the id had pushed.
func (t *Table) Limit(p int) time.Duration {
	m := &t.ms[p]
	limit := t.cfg.Timeout
	if m.Seq == 0 || m.Restored {
		limit = max(limit, min(t.cfg.Grace, StartupTimeouts*t.cfg.Timeout))
	}
	return limit
}

// Finish ends the job (a stop request); ended says whether it had not
// ended before.
func (t *Table) Finish(now time.Time) (ended bool) {
	if t.done {
		return false
	}
	t.done, t.end = true, now
	return true
}
