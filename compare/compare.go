// Package compare is pacer's comparison engine: it runs every paradigm of
// a scenario once per seed — in the simulator, in virtual-time training or
// on the live server — and returns one summary with the statistics over
// seeds and the verdict (package runstats computes both). Runs of the
// deterministic modes are spread over the machine's cores; the summary
// does not depend on how many run at once.
package compare

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/race"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/sim"
)

// Modes are the modes a comparison runs in.
var Modes = []runstats.Mode{runstats.Virtual, runstats.Sim, runstats.Inproc, runstats.TCP}

// MaxParams bounds Params: 10¹⁰ values (40 GB a model) keeps every byte
// count and transfer time in range.
const MaxParams = 10_000_000_000

// DefaultSeeds is how many seeds a comparison in mode runs when none is
// asked for: 5 in the deterministic modes (enough for a verdict with an
// interval), 1 in the live ones, where each run costs its real time.
func DefaultSeeds(mode runstats.Mode) int {
	if mode.Live() {
		return 1
	}
	return 5
}

// Launcher runs one live job on this machine in mode (inproc or tcp) and
// returns its record; progress (may be nil) is called after every
// evaluation. launch.Train is pacer's: the command line hands it to the
// engine, which so stands apart from the runtime it measures.
type Launcher func(ctx context.Context, cfg job.Config, mode runstats.Mode, progress func(runstats.Progress)) (*runstats.Run, error)

// Config is one comparison. It is typed configuration: a scenario and the
// command line's flags are merged into it before Run, never as strings.
type Config struct {
	Mode  runstats.Mode
	Specs []paradigm.Spec
	// Groups are reported and raced as one paradigm each, after Specs:
	// every seed of a group runs each member and the run is their
	// average (runstats.Average). The deterministic modes only.
	Groups []paradigm.Group
	// Job is every run's job; Run sets Spec, Seed and (virtual) Horizon.
	// Job.Seed is the base seed.
	Job job.Config
	// Seeds is how many times each paradigm runs, with seeds Job.Seed …
	// Job.Seed+Seeds−1 (data order, initial weights and timing draws all
	// differ between seeds). With Race set it is unused.
	Seeds int
	// Race, when set, races the paradigms over seeds (--seeds auto)
	// instead of running Seeds of each: the deterministic modes only.
	Race *RaceConfig
	// Horizon is the virtual-time budget every run gets (virtual mode);
	// 0 takes DefaultHorizon.
	Horizon time.Duration
	// EpochsEach, in virtual mode, trains every run for the job's epochs
	// instead of to a shared horizon, as a live run does: pacer check
	// then predicts the very iterations it measures (a horizon gives the
	// faster paradigms more, whose draws, under a heavy tail, differ).
	EpochsEach bool
	// Sim mode: iterations per worker (default 100) or a virtual duration,
	// and the workers that fail.
	Iterations int
	Duration   time.Duration
	Failures   []sim.Failure
	// Params, in sim mode with a network, is the model's size its
	// transfers move (0: Job.Model's).
	Params int
	// BaseAuto is set by ApplyScenario for a scenario's base: auto: the
	// caller measures the step (package steptime) and sets Job.Timing.Base
	// before Run, which refuses a comparison still waiting for it.
	BaseAuto bool
	// Scenario names and describes the comparison (the rest of the
	// summary's scenario is Effective); Flags are the command line's flags
	// that were given, recorded as they are.
	Scenario scenario.Scenario
	Flags    map[string]string
	// Parallel bounds the runs in flight in the deterministic modes (0:
	// GOMAXPROCS). The live modes run one at a time: they use real time.
	Parallel int
	// Launch runs the live modes' jobs (required in those modes).
	Launch Launcher
	// Progress, when set, gets one line at a time (never concurrently).
	Progress func(line string)
	// RunDone, when set, is called after each run with the number of runs
	// done and their total (never concurrently): a progress bar's count.
	RunDone func(done, total int)
}

// Validate checks what Run would refuse, before any run.
func (c *Config) Validate() error {
	if _, err := runstats.ParseMode(string(c.Mode), Modes...); err != nil {
		return err
	}
	if c.Params != 0 && (c.Params < 1 || c.Params > MaxParams || c.Mode != runstats.Sim || c.Job.Network == nil) {
		return fmt.Errorf("params=%d: sim mode with a network only, 1 to %d values", c.Params, MaxParams)
	}
	if len(c.Specs)+len(c.Groups) == 0 {
		return errors.New("no paradigm to compare")
	}
	if len(c.Groups) > 0 && c.Mode != runstats.Virtual && c.Mode != runstats.Sim {
		return fmt.Errorf("%s: a group (avg(…)) runs in the deterministic modes (virtual, sim): each seed runs every member", c.Groups[0])
	}
	if c.BaseAuto && c.Job.Timing.Base == 0 && (c.Mode == runstats.Virtual || c.Mode == runstats.Sim) {
		return errors.New("base: auto: the step time was not measured (steptime.Resolve sets Job.Timing.Base)")
	}
	if c.Race != nil {
		if err := c.validateRace(); err != nil {
			return err
		}
	} else if c.Seeds < 1 || c.Seeds > job.MaxSeeds {
		return fmt.Errorf("seeds=%d: need 1 to %d", c.Seeds, job.MaxSeeds)
	}
	if c.Job.Seed == 0 {
		return errors.New("seed 0: seeds start at 1")
	}
	if n := c.seedCount(); c.Job.Seed+uint64(n-1) < c.Job.Seed {
		// The seeds would wrap to 0 (which a virtual run reads as 1, so
		// two runs would be one sample twice) and on.
		return fmt.Errorf("seed=%d with seeds=%d: the last seed would pass 2^64−1", c.Job.Seed, n)
	}
	switch {
	case c.Horizon < 0:
		return fmt.Errorf("horizon=%s must not be negative", c.Horizon)
	case c.Duration < 0:
		return fmt.Errorf("duration=%s must not be negative", c.Duration)
	case c.Iterations < 0:
		return fmt.Errorf("iterations=%d must not be negative", c.Iterations)
	}
	seen := map[string]bool{}
	for _, name := range c.Names() {
		// Runs are grouped by the spec's name: two equal ones would be
		// one paradigm's seeds counted twice.
		if seen[name] {
			return fmt.Errorf("paradigm %s is listed twice", name)
		}
		seen[name] = true
	}
	if c.Mode == runstats.Sim && c.Job.Target > 0 {
		return fmt.Errorf("target=%g: sim mode trains no model, so there is no accuracy to reach (use virtual mode)", c.Job.Target)
	}
	if c.Horizon > 0 && c.Mode != runstats.Virtual {
		return fmt.Errorf("a horizon applies to virtual mode (sim mode has --duration; the live modes run in real time)")
	}
	if c.EpochsEach && c.Horizon > 0 {
		return fmt.Errorf("a horizon and epochs for each run: give one")
	}
	for _, sp := range c.AllSpecs() {
		j := c.Job
		j.Spec = sp
		if err := j.Fill(); err != nil {
			return fmt.Errorf("%s: %w", sp, err)
		}
		if c.Mode.Live() {
			if err := live.CheckJob(&j); err != nil {
				return fmt.Errorf("%s: %w", sp, err)
			}
		}
	}
	if c.Mode.Live() && c.Launch == nil {
		return fmt.Errorf("mode %s: no launcher to run its live jobs (Config.Launch)", c.Mode)
	}
	return nil
}

// Names are the compared paradigms' names, as reported: Specs, then
// Groups.
func (c *Config) Names() []string {
	names := make([]string, 0, len(c.Specs)+len(c.Groups))
	for _, sp := range c.Specs {
		names = append(names, sp.String())
	}
	for _, g := range c.Groups {
		names = append(names, g.String())
	}
	return names
}

// AllSpecs is every spec a run trains: Specs and the groups' members.
func (c *Config) AllSpecs() []paradigm.Spec {
	out := slices.Clone(c.Specs)
	for _, g := range c.Groups {
		out = append(out, g.Members...)
	}
	return out
}

// seedCount is Seeds, or in a race the most seeds a paradigm can run.
func (c *Config) seedCount() int {
	if c.Race == nil {
		return c.Seeds
	}
	m := c.metric(0)
	return c.raceMaxSeeds(c.raceConfig(m).Budget)
}

// SeedList is the seeds the runs use; in a race, the seeds they may use
// (the race stops when it is decided).
func (c *Config) SeedList() []uint64 {
	s := make([]uint64, c.seedCount())
	for i := range s {
		s[i] = c.Job.Seed + uint64(i)
	}
	return s
}

// Run runs the comparison and returns its summary. When ctx is done, the
// runs in progress stop within moments (every mode observes it) and Run
// returns an error wrapping ctx's and no summary: a comparison missing
// runs has no verdict.
func Run(ctx context.Context, c Config) (*Summary, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e := &engine{c: c, start: time.Now()}
	var runs []runstats.Run
	var res *race.Result
	var raced raceMetric
	var err error
	one := func(k int) (*runstats.Run, error) { return e.simRun(ctx, k) }
	if c.Mode == runstats.Virtual {
		if err := e.prepareVirtual(ctx); err != nil {
			return nil, err
		}
		one = func(k int) (*runstats.Run, error) { return e.virtualRun(ctx, k) }
	}
	switch {
	case c.Race != nil:
		runs, res, raced, err = e.race(ctx, one)
	case c.Mode == runstats.Sim || c.Mode == runstats.Virtual:
		runs, err = e.parallel(ctx, one)
	default:
		runs, err = e.live(ctx)
	}
	if err != nil {
		return nil, err
	}
	names := c.Names()
	version, commit := Build()
	if c.Mode == runstats.Virtual {
		c.Horizon = e.horizon
	}
	s := &Summary{Version: version, Schema: Schema, Commit: commit, Mode: c.Mode, Scenario: Effective(&c),
		Flags: c.Flags, Seeds: c.SeedList(), Target: c.Job.Target, IntervalMethod: IntervalMethod, Runs: runs,
		GroupRuns: e.groupRuns()}
	if res != nil {
		// The seeds the race ran: as many as its longest-running paradigms.
		n := 0
		for _, st := range res.Standings {
			n = max(n, st.Seeds)
		}
		s.Seeds = s.Seeds[:n]
	}
	switch c.Mode {
	case runstats.Virtual:
		s.HorizonSeconds = e.horizon.Seconds()
	case runstats.Sim:
		s.HorizonSeconds = c.Duration.Seconds()
	}
	s.Paradigms, s.Verdict = Analyze(runs, names, s.Seeds, c.Job.Target)
	if s.Verdict.Metric != MetricNone {
		s.TestMethod = TestMethod
		if c.Job.Target > 0 {
			s.TimeToTargetMethod = runstats.TimeToMethod
		}
	}
	if res != nil {
		s.Race = res
		s.TestMethod = race.Method
		raceVerdict(&s.Verdict, res, raced.key)
	}
	return s, nil
}

type engine struct {
	c       Config
	start   time.Time
	mu      sync.Mutex // serializes Progress
	ds      *data.Dataset
	horizon time.Duration
	done    int
	// jobs are the runs of the race's current round; nil in the fixed
	// design, which runs every paradigm × seed.
	jobs []runKey
	// members are the groups' member runs, kept for summary.json.
	members map[runKey][]runstats.Run
}

// runKey is one run: a paradigm (an index into Config.Names) and a seed.
type runKey struct {
	spec int
	seed uint64
}

func (e *engine) say(format string, a ...any) {
	if e.c.Progress == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.c.Progress(fmt.Sprintf(format, a...))
}

// runDone counts one more run done, tells Config.RunDone, and returns the count.
func (e *engine) runDone() int {
	// One critical section for the count and the call: two runs that end
	// together reach RunDone in the order of their counts.
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done++
	if e.c.RunDone != nil {
		e.c.RunDone(e.done, e.total())
	}
	return e.done
}

// runJob is the k-th run: in the fixed design paradigm k / Seeds, seed
// k % Seeds; in a race the round's k-th. The paradigm is an index into
// Config.Names: a spec, or past them a group.
func (e *engine) runJob(k int) (int, uint64) {
	if e.c.Race != nil {
		return e.jobs[k].spec, e.jobs[k].seed
	}
	return k / e.c.Seeds, e.c.Job.Seed + uint64(k%e.c.Seeds)
}

// name is paradigm i's name (Config.Names).
func (e *engine) name(i int) string {
	if i < len(e.c.Specs) {
		return e.c.Specs[i].String()
	}
	return e.c.Groups[i-len(e.c.Specs)].String()
}

// entryRun is run k through single, the mode's run of one spec: a group
// runs each member on the seed, one after another, and returns their
// average; the members are kept for summary.json.
func (e *engine) entryRun(k int, single func(sp paradigm.Spec, seed uint64) (*runstats.Run, error)) (*runstats.Run, error) {
	i, seed := e.runJob(k)
	if i < len(e.c.Specs) {
		return single(e.c.Specs[i], seed)
	}
	g := e.c.Groups[i-len(e.c.Specs)]
	members := make([]runstats.Run, len(g.Members))
	for m, sp := range g.Members {
		r, err := single(sp, seed)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", sp, err)
		}
		members[m] = *r
	}
	avg := runstats.Average(g.String(), members, e.c.Job.Target, e.c.Job.Targets)
	e.mu.Lock()
	if e.members == nil {
		e.members = map[runKey][]runstats.Run{}
	}
	e.members[runKey{i, seed}] = members
	e.mu.Unlock()
	return &avg, nil
}

// groupRuns are the groups' member runs: group by group, member by member,
// seeds in order.
func (e *engine) groupRuns() []runstats.Run {
	var out []runstats.Run
	for gi, g := range e.c.Groups {
		i := len(e.c.Specs) + gi
		var seeds []uint64
		for key := range e.members {
			if key.spec == i {
				seeds = append(seeds, key.seed)
			}
		}
		slices.Sort(seeds)
		for m := range g.Members {
			for _, seed := range seeds {
				out = append(out, e.members[runKey{i, seed}][m])
			}
		}
	}
	return out
}

// total is the runs the comparison makes: in a race, at most its budget.
func (e *engine) total() int {
	if e.c.Race != nil {
		return e.c.raceConfig(e.c.metric(0)).Budget
	}
	return len(e.c.Names()) * e.c.Seeds
}

// batch is how many runs parallel makes: the race's round, or all.
func (e *engine) batch() int {
	if e.c.Race != nil {
		return len(e.jobs)
	}
	return e.total()
}

// parallel runs every (paradigm, seed) of the batch with one, storing each
// result in its own slot, so the order of the runs (paradigm by paradigm,
// seeds in order) never depends on which finished first.
func (e *engine) parallel(ctx context.Context, one func(k int) (*runstats.Run, error)) ([]runstats.Run, error) {
	n, total := e.batch(), e.total()
	out := make([]runstats.Run, n)
	errs := make([]error, n)
	workers := e.c.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool // errs is read only after wg.Wait: the workers write it meanwhile
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				r, err := one(k)
				if err != nil {
					i, seed := e.runJob(k)
					errs[k] = fmt.Errorf("%s (seed %d): %w", e.name(i), seed, err)
					failed.Store(true)
					continue
				}
				out[k] = *r
				done := e.runDone()
				e.say("compare: %d/%d runs done (%s, seed %d)  wall %s", done, total, r.Paradigm, r.Seed,
					time.Since(e.start).Round(time.Second))
			}
		}()
	}
	for k := 0; k < n; k++ {
		if ctx.Err() != nil || failed.Load() {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		// The runs in flight saw it too and stopped (their errors say
		// only that); the finished ones are no comparison by themselves.
		return nil, e.interrupted(ctx)
	}
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// interrupted is the error of a comparison stopped by its context: how far
// it got, wrapping the context's error. Run returns no summary then.
func (e *engine) interrupted(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fmt.Errorf("interrupted after %d of %d runs: %w", e.done, e.total(), ctx.Err())
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
