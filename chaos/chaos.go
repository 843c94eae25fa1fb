// Package chaos runs live jobs as separate processes on loopback (through
// package launch's tcp mode) and injects randomized faults into them:
// kill -9 of workers, of shards and of the coordinator (shard 0) at random
// points of the job, with and without restarts (a shard with --restore, a
// worker under its old --id). Every run is bounded in time; the suite
// reports, per paradigm and fault kind, the runs that finished, the ones
// that hung or failed, the acknowledged updates a restarted shard lost, and
// the time to finish.
//
// Randomness comes from one seed: run i draws its schedule from (seed, i)
// alone, so a failed run is replayed with the same seed and --from i
// --runs 1 (the schedule is the same; when in the job each fault fires is
// counted in pushes, so the processes' own timing still varies).
package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
)

// Paradigms are the specs the suite cycles through: every paradigm, with
// bounds small enough at 3 workers that the synchronous ones wait, and
// ElasticBSP twice: its apply=local mode has the shards apply at the
// barrier, a path of its own under restarts (a coordinator restart once
// stalled it).
var Paradigms = []string{"bsp", "asp", "ssp:s=3", "dssp:sl=2,su=6", "elastic:r=4", "elastic:r=4,apply=local", "backup:b=1", "psp:c=2,b=0.5", "softsync:n=2"}

// Kinds are the fault kinds, one per run (mixed: two faults of the others;
// it stays last).
var Kinds = []string{"worker", "worker-rejoin", "shard-restart", "coord-restart", "dup-id", "shard-stop", "mixed"}

// stopFor is how long a shard-stop fault holds its shard stopped (SIGSTOP,
// then SIGCONT) by default: past every heartbeat timeout and the 10 s after
// which a wait is logged, as a shard hung by its host would be. The short
// form (scripts/test) takes a shorter one (--stop-for): the stop is wall time
// spent waiting, two thirds of the short form's at 20 s.
const stopFor = 20 * time.Second

// The job's batch; the synthetic set's training samples (a longer job
// takes more than one epoch of them); the longest job.
const (
	batch     = 16
	trainN    = 6000
	maxPushes = 100_000
)

// Config is one suite.
type Config struct {
	Seed uint64
	// Runs is the number of runs; run i (From ≤ i < From+Runs) takes
	// paradigm i mod 9 and kind i mod len(Kinds): 9 and 7 are coprime, so
	// every 63 runs cover every pair once, and 45 every paradigm five
	// times and every kind at least six.
	Runs, From int
	// Kinds restricts the fault kinds (nil: all of Kinds).
	Kinds []string
	// Paradigms restricts the specs cycled through (nil: all of
	// Paradigms); run i takes Paradigms[i mod len]. Any spec the live
	// modes run is accepted, e.g. only "bsp" to hunt a BSP hang.
	Paradigms []string
	// Durability of the shards: "log" (nothing acknowledged may be lost)
	// or "checkpoint".
	Durability string
	// The job: Workers workers, Shards shards, Pushes pushes in all (the
	// synthetic data set cut to fit).
	Workers, Shards int
	Pushes          int
	// Timeout bounds a run: one not finished by then is a hang.
	Timeout time.Duration
	// HeartbeatTimeout is the job's (a killed worker is removed after it).
	HeartbeatTimeout time.Duration
	// StopFor is how long a shard-stop fault holds its shard (0: stopFor).
	StopFor time.Duration
	// Binary is the pacer executable (os.Executable()).
	Binary string
	// Dir holds each run's checkpoints and logs (removed after a run that
	// finished; kept for a failed one). "": a temporary directory.
	Dir string
	// Progress, when set, is told about every run as it ends.
	Progress func(Run)
}

// Fault is one fault of a run's schedule.
type Fault struct {
	Role     string        `json:"role"` // worker | shard
	Index    int           `json:"index"`
	AtPushes int64         `json:"at_pushes"`
	Restart  bool          `json:"restart"`
	After    time.Duration `json:"restart_after_ns"`
	// Stop: the shard is stopped (SIGSTOP) for this long, not killed.
	Stop time.Duration `json:"stop_ns,omitempty"`
	// Duplicate: a second worker process starts under the victim's id.
	Duplicate bool `json:"duplicate,omitempty"`
}

func (f Fault) String() string {
	switch {
	case f.Stop > 0:
		return fmt.Sprintf("SIGSTOP %s %d at push %d, SIGCONT after %s", f.Role, f.Index, f.AtPushes, f.Stop)
	case f.Duplicate:
		return fmt.Sprintf("a second %s process under id %d at push %d", f.Role, f.Index, f.AtPushes)
	}
	s := fmt.Sprintf("kill -9 %s %d at push %d", f.Role, f.Index, f.AtPushes)
	if f.Restart {
		s += fmt.Sprintf(", restart after %s", f.After.Round(time.Millisecond))
	}
	return s
}

// Run is one run's outcome.
type Run struct {
	Index    int     `json:"index"`
	Seed     uint64  `json:"seed"` // the suite's
	Paradigm string  `json:"paradigm"`
	Kind     string  `json:"kind"`
	Faults   []Fault `json:"faults"`
	// Outcome: finished | hang (not finished within the timeout) | failed
	// (an error before the timeout: a process that exited, a restart that
	// failed).
	Outcome string  `json:"outcome"`
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"` // wall time of the run
	// Pushes and Target are the coordinator's count at the end and the
	// job's length; Pushes beyond Target by more than the in-flight pushes
	// (one per worker) is a job that lost its count.
	Pushes int64 `json:"pushes"`
	Target int64 `json:"target"`
	// Lost is the acknowledged updates (versions) the restarted shards did
	// not hold again: the versions each skipped forward to what the workers
	// had already been sent (proto.ShardStats.Skipped), summed.
	Lost uint64 `json:"lost"`
	// Leaked counts child processes still alive after the run (want 0).
	Leaked int `json:"leaked"`
	// Fired is how many of the faults fired (a fault waits for its push
	// count, and a worker's for the victim's first push: one the job
	// outran never fires), FiredAt the coordinator's push count at each.
	Fired   int     `json:"fired"`
	FiredAt []int64 `json:"fired_at,omitempty"`
	// Disagree names each shard of a --paradigm auto job that ended under
	// another rule than the coordinator's (want none: a switch reaches
	// every shard, across restarts too).
	Disagree []string `json:"disagree,omitempty"`
}

// Failed reports whether the run needs a look: not finished, updates
// lost, processes left behind, or shards under another rule than the
// coordinator's.
func (r Run) Failed() bool {
	return r.Outcome != "finished" || r.Lost > 0 || r.Leaked > 0 || len(r.Disagree) > 0
}

// Replay is the command that runs r again.
func (r Run) Replay(c Config) string {
	return fmt.Sprintf("scripts/chaos --seed %d --from %d --runs 1 --kinds %s --durability %s --pushes %d --workers %d --shards %d --heartbeat-timeout %s --stop-for %s --timeout %s --paradigms %s",
		r.Seed, r.Index, r.Kind, c.Durability, c.Pushes, c.Workers, c.Shards, c.HeartbeatTimeout, c.StopFor, c.Timeout, r.Paradigm)
}

func (c *Config) fill() error {
	if c.Runs < 1 {
		return fmt.Errorf("chaos: runs=%d: need at least 1", c.Runs)
	}
	if c.From < 0 {
		return fmt.Errorf("chaos: from=%d must not be negative", c.From)
	}
	if len(c.Kinds) == 0 {
		c.Kinds = Kinds
	}
	for _, k := range c.Kinds {
		if !contains(Kinds, k) {
			return fmt.Errorf("chaos: fault kind %q: want one of %s", k, strings.Join(Kinds, ", "))
		}
	}
	if len(c.Paradigms) == 0 {
		c.Paradigms = Paradigms
	}
	for _, p := range c.Paradigms {
		if _, err := paradigm.Parse(p); err != nil {
			return fmt.Errorf("chaos: paradigm %q: %w", p, err)
		}
	}
	if c.Durability == "" {
		c.Durability = live.DurabilityLog
	}
	if c.Durability != live.DurabilityLog && c.Durability != live.DurabilityCheckpoint {
		return fmt.Errorf("chaos: durability %q: want log or checkpoint", c.Durability)
	}
	if c.Workers == 0 {
		c.Workers = 3
	}
	if c.Shards == 0 {
		c.Shards = 2
	}
	if c.Workers < 2 || c.Shards < 2 {
		return fmt.Errorf("chaos: workers=%d shards=%d: need at least 2 of each (a killed one must leave others)", c.Workers, c.Shards)
	}
	if c.Pushes == 0 {
		c.Pushes = 300
	}
	if c.Pushes < 50 || c.Pushes > maxPushes {
		return fmt.Errorf("chaos: pushes=%d: want 50 (faults fire mid-job) to %d", c.Pushes, maxPushes)
	}
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = time.Second
	}
	if c.StopFor == 0 {
		c.StopFor = stopFor
	}
	// A stop no longer than the heartbeat timeout is no hang; one as long as
	// the run's timeout makes every shard-stop run a hang.
	if c.StopFor <= c.HeartbeatTimeout || c.StopFor >= c.Timeout {
		return fmt.Errorf("chaos: stop-for=%s: want more than the heartbeat timeout (%s) and less than the run's timeout (%s)", c.StopFor, c.HeartbeatTimeout, c.Timeout)
	}
	if c.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("chaos: the pacer binary: %w", err)
		}
		c.Binary = exe
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Schedule is run i's paradigm, kind and faults, drawn from (seed, i).
func (c *Config) Schedule(i int) (spec, kind string, faults []Fault) {
	rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
	spec = c.Paradigms[i%len(c.Paradigms)]
	kind = c.Kinds[i%len(c.Kinds)]
	kinds := []string{kind}
	if kind == "mixed" {
		others := Kinds[:len(Kinds)-1]
		kinds = []string{others[rng.IntN(len(others))], others[rng.IntN(len(others))]}
	}
	usedShard := map[int]bool{}
	usedWorker := map[int]bool{}
	for _, k := range kinds {
		// Somewhere in the middle 10–70% of the job: early enough that
		// the job has work left to hang on, late enough that it has state
		// to lose.
		f := Fault{AtPushes: int64(c.Pushes) * int64(10+rng.IntN(61)) / 100}
		hb := c.HeartbeatTimeout
		switch k {
		case "worker", "worker-rejoin", "dup-id":
			f.Role, f.Index = "worker", rng.IntN(c.Workers)
			f.Duplicate = k == "dup-id"
			for usedWorker[f.Index] {
				f.Index = (f.Index + 1) % c.Workers
			}
			usedWorker[f.Index] = true
			if k == "worker-rejoin" {
				// Before its removal (under the heartbeat timeout) or after.
				f.Restart = true
				f.After = time.Duration(rng.Int64N(int64(2*hb + hb/2)))
			}
		case "shard-stop":
			// A shard other than the coordinator's, as shard-restart.
			f.Role, f.Index, f.Stop = "shard", 1+rng.IntN(c.Shards-1), c.StopFor
			if usedShard[f.Index] {
				f.Index = (f.Index + 1) % c.Shards
			}
			usedShard[f.Index] = true
		case "shard-restart", "coord-restart":
			f.Role, f.Restart = "shard", true
			if k == "shard-restart" {
				f.Index = 1 + rng.IntN(c.Shards-1)
			}
			if usedShard[f.Index] {
				f.Index = (f.Index + 1) % c.Shards
			}
			usedShard[f.Index] = true
			f.After = time.Duration(rng.Int64N(int64(hb)))
		}
		faults = append(faults, f)
	}
	return spec, kind, faults
}

// Suite runs c's runs one after another and returns them.
func Suite(ctx context.Context, c Config) ([]Run, error) {
	if err := c.fill(); err != nil {
		return nil, err
	}
	dir := c.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "pacer-chaos-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var runs []Run
	for i := c.From; i < c.From+c.Runs; i++ {
		if ctx.Err() != nil {
			return runs, ctx.Err()
		}
		r, err := c.run(ctx, i, filepath.Join(dir, "run-"+strconv.Itoa(i)))
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
		if c.Progress != nil {
			c.Progress(r)
		}
	}
	return runs, nil
}

// run is one run: the job, its faults, and what became of them.
func (c *Config) run(ctx context.Context, i int, dir string) (Run, error) {
	spec, kind, faults := c.Schedule(i)
	r := Run{Index: i, Seed: c.Seed, Paradigm: spec, Kind: kind, Faults: faults}
	sp, err := paradigm.Parse(spec)
	if err != nil {
		return r, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	// A small job: c.Pushes pushes of 16 samples of the synthetic set (cut
	// to one epoch for a short job); test accuracy is measured once, at
	// the end.
	n := min(c.Pushes*batch, trainN)
	cfg := job.Config{Spec: sp, Workers: c.Workers, Shards: c.Shards, Model: "mlp", Dataset: "synthetic",
		TrainLimit: n, TestLimit: 200, Epochs: float64(c.Pushes*batch) / float64(n), Batch: batch, LR: 0.05, Momentum: -1,
		EvalEvery: 1, HeartbeatTimeout: c.HeartbeatTimeout}
	opt := launch.Options{Mode: runstats.TCP, Binary: c.Binary, CheckpointDir: dir, CheckpointInterval: 300 * time.Millisecond,
		Durability: c.Durability, Timeout: c.Timeout, Poll: 20 * time.Millisecond}
	for _, f := range faults {
		opt.Faults = append(opt.Faults, launch.Fault{Role: f.Role, Index: f.Index, AtPushes: f.AtPushes, Restart: f.Restart, RestartAfter: f.After,
			Stop: f.Stop, Duplicate: f.Duplicate})
	}
	logf, err := os.Create(filepath.Join(dir, "processes.log"))
	if err != nil {
		return r, err
	}
	opt.Log = logf
	start := time.Now()
	res, err := launch.TrainResult(ctx, cfg, opt, nil)
	r.Seconds = time.Since(start).Seconds()
	logf.Close()
	if ctx.Err() != nil {
		return r, ctx.Err() // the suite was interrupted, not the run
	}
	switch {
	case err == nil:
		r.Outcome = "finished"
	case errors.Is(err, launch.ErrInterrupted) && errors.Is(err, context.DeadlineExceeded):
		r.Outcome, r.Error = "hang", err.Error()
	default:
		r.Outcome, r.Error = "failed", err.Error()
	}
	if res != nil {
		r.Pushes, r.Target = res.Coord.Pushes, res.Coord.Target
		for i, s := range res.Shards {
			r.Lost += s.Skipped
			if s.Rule != "" && s.Rule != res.Coord.Paradigm {
				r.Disagree = append(r.Disagree, fmt.Sprintf("shard %d under %s, the coordinator under %s", i, s.Rule, res.Coord.Paradigm))
			}
		}
		for _, f := range res.Faults {
			r.Fired++
			r.FiredAt = append(r.FiredAt, f.FiredAt)
		}
	}
	r.Leaked = leakedChildren()
	if !r.Failed() {
		os.RemoveAll(dir)
	}
	return r, nil
}

// leakedChildren counts this process's children still alive (zombies are
// reaped already by launch; a live one is a leak). Linux only: 0 elsewhere.
func leakedChildren() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	me := os.Getpid()
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		s := string(b)
		k := strings.LastIndexByte(s, ')')
		if k < 0 {
			continue
		}
		f := strings.Fields(s[k+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me && pid != me {
			n++
		}
	}
	return n
}
