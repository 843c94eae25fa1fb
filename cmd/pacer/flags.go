package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
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

// clusterFlags are the scenario flags shared by sim, train and compare.
type clusterFlags struct {
	workers     int
	shards      int
	speeds      floatList
	jitter      float64
	straggler   string
	serverDelay string
	base        time.Duration
	seed        uint64
	failures    string
}

func (c *clusterFlags) bind(fs *flag.FlagSet, defWorkers int) {
	fs.IntVar(&c.workers, "workers", defWorkers, "number of workers K")
	fs.IntVar(&c.shards, "shards", 1, "number of server shards S")
	fs.Var(&c.speeds, "speeds", "per-worker iteration-time multipliers, cycled over the workers (e.g. 1,2.2)")
	fs.Float64Var(&c.jitter, "jitter", 0, "coefficient of variation of log-normal iteration-time jitter")
	fs.StringVar(&c.straggler, "straggler", "", "straggler model: "+timing.StragglerForms)
	fs.StringVar(&c.serverDelay, "server-delay", "", "server delay model: "+timing.ServerForms)
	fs.DurationVar(&c.base, "base", 0, "iteration time of a speed-1 worker (default 1s)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed; the same seed gives the same result")
	fs.StringVar(&c.failures, "fail", "", "workers that die, as WORKER@TIME,... (e.g. 2@30s)")
}

func (c *clusterFlags) timing() timing.WorkerSpec {
	return timing.WorkerSpec{Base: c.base, Speeds: c.speeds, Jitter: c.jitter, Straggler: c.straggler}
}

func (c *clusterFlags) validate() error {
	if c.workers < 1 {
		return fmt.Errorf("--workers=%d: need at least 1", c.workers)
	}
	if c.shards < 1 {
		return fmt.Errorf("--shards=%d: need at least 1", c.shards)
	}
	if c.jitter < 0 {
		return fmt.Errorf("--jitter=%g must not be negative", c.jitter)
	}
	if c.base < 0 {
		return fmt.Errorf("--base=%s must not be negative", c.base)
	}
	return nil
}

// parseFailures parses --fail "2@30s,5@1m".
func parseFailures(s string, workers int) ([]sim.Failure, error) {
	var out []sim.Failure
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		w, at, ok := strings.Cut(strings.TrimSpace(f), "@")
		p, err1 := strconv.Atoi(w)
		d, err2 := time.ParseDuration(at)
		if !ok || err1 != nil || err2 != nil || p < 0 || p >= workers || d < 0 {
			return nil, fmt.Errorf("--fail: %q is not WORKER@DURATION with 0 ≤ WORKER < %d", f, workers)
		}
		out = append(out, sim.Failure{Worker: p, At: d})
	}
	return out, nil
}
