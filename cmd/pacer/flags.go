package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/steptime"
	"github.com/pacer-ps/pacer/timing"
	"github.com/spf13/pflag"
)

func paradigmForms() string { return paradigm.Forms }

// floatList is a comma-separated list of positive floats (--speeds).
type floatList []float64

func (f *floatList) String() string {
	parts := make([]string, len(*f))
	for i, v := range *f {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (f *floatList) Type() string { return "floats" }

func (f *floatList) Set(s string) error {
	*f = (*f)[:0]
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) {
			return fmt.Errorf("%q is not a positive number", p)
		}
		*f = append(*f, v)
	}
	return nil
}

// specFlag is a timing model flag (--straggler, --server-delay), parsed
// and checked when given: a bad spec is a usage error naming the flag.
type specFlag[T fmt.Stringer] struct {
	v     *T
	parse func(string) (T, error)
}

func (f specFlag[T]) String() string {
	if f.v == nil {
		return ""
	}
	return (*f.v).String()
}

func (f specFlag[T]) Type() string { return "spec" }

func (f specFlag[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.v = v
	return nil
}

// baseFlag is --base: a duration (0: the default 1 s) or auto, this
// machine's step time of the job's model (resolveBase).
type baseFlag struct {
	d    time.Duration
	auto bool
}

// String is the duration as pflag's own duration flag writes it, so
// summary.json's flags read as they always did.
func (b *baseFlag) String() string {
	if b.auto {
		return scenario.BaseAuto
	}
	return b.d.String()
}

func (b *baseFlag) Type() string { return "duration" }

func (b *baseFlag) Set(s string) error {
	if s == scenario.BaseAuto {
		*b = baseFlag{auto: true}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 20ms, or %s (this machine's step time)", scenario.BaseAuto)
	}
	*b = baseFlag{d: d}
	return nil
}

// clusterFlags are the scenario flags shared by sim, train and compare.
type clusterFlags struct {
	workers     int
	shards      int
	speeds      floatList
	jitter      float64
	straggler   timing.Straggler
	serverDelay timing.ServerDelay
	base        baseFlag
	deviceRate  float64 // FLOP/s for --base auto (0: time the step here)
	seed        uint64
	failures    string
	searchCost  time.Duration
}

func (c *clusterFlags) bind(fs *pflag.FlagSet, defWorkers int) {
	fs.IntVar(&c.workers, "workers", defWorkers, "number of workers K")
	fs.IntVar(&c.shards, "shards", job.DefaultShards, "number of server shards S")
	fs.Var(&c.speeds, "speeds", "per-worker iteration-time multipliers, cycled over the workers (e.g. 1,2.2)")
	fs.Float64Var(&c.jitter, "jitter", 0, "coefficient of variation of log-normal iteration-time jitter")
	fs.Var(specFlag[timing.Straggler]{&c.straggler, timing.ParseStraggler}, "straggler", "straggler model: "+timing.StragglerForms)
	fs.Var(specFlag[timing.ServerDelay]{&c.serverDelay, timing.ParseServerDelay}, "server-delay", "server delay model: "+timing.ServerForms)
	fs.Var(&c.base, "base", "iteration time of a speed-1 worker (default 1s), or auto: the model's step at its batch timed on this machine (virtual time and sim)")
	fs.Lookup("base").DefValue = "" // "0s" is the 1 s default, which the usage states
	fs.Float64Var(&c.deviceRate, "device-rate", 0, "with --base auto: the FLOP/s of the device the workers run on, instead of timing the step here")
	fs.Uint64Var(&c.seed, "seed", job.DefaultSeed, "random seed ≥ 1; the same seed gives the same result")
	fs.StringVar(&c.failures, "fail", "", "workers that die, as WORKER@TIME,... (e.g. 2@30s)")
	fs.DurationVar(&c.searchCost, "search-cost", job.DefaultSearchCost, "simulated server time per unit of ElasticBSP barrier-search work (n²·R for zipline, the paper's order; 0: free)")
}

func (c *clusterFlags) timing() timing.WorkerSpec {
	return timing.WorkerSpec{Base: c.base.d, Speeds: c.speeds, Jitter: c.jitter, Straggler: c.straggler}
}

func (c *clusterFlags) validate() error {
	if c.workers < 1 {
		return fmt.Errorf("--workers=%d: need at least 1", c.workers)
	}
	if c.shards < 1 {
		return fmt.Errorf("--shards=%d: need at least 1", c.shards)
	}
	if c.searchCost < 0 {
		return fmt.Errorf("--search-cost=%s must not be negative (0: the search is free)", c.searchCost)
	}
	if !(c.jitter >= 0) || math.IsInf(c.jitter, 0) {
		return fmt.Errorf("--jitter=%g must be a finite number ≥ 0", c.jitter)
	}
	if c.base.d < 0 {
		return fmt.Errorf("--base=%s must not be negative", &c.base)
	}
	if !(c.deviceRate >= 0) || c.deviceRate > steptime.MaxDeviceRate {
		return fmt.Errorf("--device-rate=%g: want FLOP/s, a number in (0, %g]", c.deviceRate, float64(steptime.MaxDeviceRate))
	}
	// What needs the other flags (a duration against --base, a slow
	// worker or a shard the job has), named as the flag.
	if err := c.timing().Check(c.workers); err != nil {
		return fmt.Errorf("--straggler=%q: %w", c.straggler, err)
	}
	if err := c.serverDelay.Check(c.shards); err != nil {
		return fmt.Errorf("--server-delay=%q: %w", c.serverDelay, err)
	}
	if c.seed == 0 {
		// job.Config reads a zero seed as its default, 1: refuse it
		// everywhere rather than let train and sim read it differently.
		return fmt.Errorf("--seed=0: seeds start at 1")
	}
	return c.size(0, 0).Check("--")
}

// size is the cluster with a simulated run's length, for the limits.
func (c *clusterFlags) size(iters int, dur time.Duration, specs ...paradigm.Spec) job.Size {
	return simSize(c.workers, c.shards, c.timing(), iters, dur, specs...)
}

// simSize is a simulated run's size: the cluster, its length (iterations
// per worker or virtual time) and the paradigms.
func simSize(workers, shards int, t timing.WorkerSpec, iters int, dur time.Duration, specs ...paradigm.Spec) job.Size {
	return job.Size{Workers: workers, Shards: shards, Iterations: iters, Duration: dur, Base: t.Base,
		FastestSpeed: job.FastestSpeed(t.Speeds), Specs: specs, Speeds: t.Speeds, Jitter: t.Jitter}
}

// setFlags is the set of flags given on the command line: those win over
// a scenario, the environment and TF_CONFIG.
func setFlags(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { m[f.Name] = true })
	return m
}

// virtualOnlyFlags shape the simulated cluster only. The workers' timing
// flags (speeds, jitter, straggler, base) and server delays apply in every
// mode: the live workers stretch their real iterations to them
// (live/worker/pace.go), and the shards hold their pull replies
// (live/emulate.go); tcp mode emulates the links (package nsnet).
var virtualOnlyFlags = []string{"apply-rate", "search-cost"}

// networkFlagNames are the simulated network's flags.
var networkFlagNames = []string{"network", "link", "worker-link", "shard-link", "apply-rate"}

// refuseGiven returns an error for the first of names given on the command
// line; why follows the flag's name ("--speeds " + why).
func refuseGiven(given map[string]bool, names []string, why string) error {
	for _, n := range names {
		if given[n] {
			return fmt.Errorf("--%s %s", n, why)
		}
	}
	return nil
}

// prepareOut creates the output directory dir before any run and checks
// that a file can be written in it, so a bad --out fails at once instead of
// after minutes of work. The returned function removes the directories it
// created when they are still empty: call it when the command fails, so a
// refused run leaves nothing behind.
func prepareOut(dir string) (undo func(), err error) {
	if strings.TrimSpace(dir) == "" {
		return nil, fmt.Errorf("--out: empty directory name")
	}
	var created []string // deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	undo = func() {
		for _, d := range created {
			if os.Remove(d) != nil { // not empty (or gone): keep it and its parents
				return
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".pacer-write-test-*")
	if err != nil {
		undo()
		return nil, fmt.Errorf("--out %s: not writable: %w", dir, err)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		undo()
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	return undo, nil
}

// parseParadigms parses a ';'-separated list of paradigm specs and groups
// (avg(…), returned apart), refusing empty entries and the same paradigm
// twice (compared in canonical form: "ssp:s=3" and "ssp: s=3" are one).
// what names the list's source.
func parseParadigms(list, what string) ([]paradigm.Spec, []paradigm.Group, error) {
	return paradigmList(strings.Split(list, ";"), what)
}

// paradigmList parses each entry of parts once (what names them in an
// error): a scenario's list as --paradigms' entries.
func paradigmList(parts []string, what string) ([]paradigm.Spec, []paradigm.Group, error) {
	var out []paradigm.Spec
	var groups []paradigm.Group
	seen := map[string]string{}
	list := strings.Join(parts, ";")
	if len(parts) == 0 {
		parts = []string{""} // as an empty --paradigms: "no paradigm given"
	}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			if len(parts) == 1 {
				return nil, nil, fmt.Errorf("%s: no paradigm given; valid forms: %s", what, paradigm.Forms)
			}
			return nil, nil, fmt.Errorf("%s: entry %d of %d is empty (%q)", what, i+1, len(parts), list)
		}
		var key string
		if paradigm.IsGroup(p) {
			g, err := paradigm.ParseGroup(p)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			groups = append(groups, g)
			key = g.String()
		} else {
			sp, err := paradigm.Parse(p)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			out = append(out, sp)
			key = sp.String()
		}
		if first, ok := seen[key]; ok {
			as := ""
			if first != strings.TrimSpace(p) {
				as = fmt.Sprintf(" (as %q and %q)", first, strings.TrimSpace(p))
			}
			return nil, nil, fmt.Errorf("%s: %s is given twice%s; each paradigm runs once", what, key, as)
		}
		seen[key] = strings.TrimSpace(p)
	}
	return out, groups, nil
}

// modeValue is a --mode (or --live) flag: a runstats.Mode, refused when
// parsed unless it is one of valid.
type modeValue struct {
	m     *runstats.Mode
	valid []runstats.Mode
}

// modeFlag binds a mode flag on fs, def its default.
func modeFlag(fs *pflag.FlagSet, name string, def runstats.Mode, usage string, valid ...runstats.Mode) *runstats.Mode {
	m := def
	fs.Var(&modeValue{&m, valid}, name, usage)
	return &m
}

func (v *modeValue) String() string {
	if v == nil || v.m == nil {
		return ""
	}
	return string(*v.m)
}

func (v *modeValue) Set(s string) error {
	m, err := runstats.ParseMode(s, v.valid...)
	if err != nil {
		return err
	}
	*v.m = m
	return nil
}

func (v *modeValue) Type() string { return "string" } // shown as the other string flags are, its default quoted
