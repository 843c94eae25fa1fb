package compare

import (
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/timing"
)

// ApplyScenario sets every field of c that sc gives and the command line
// did not: given reports whether the flag of that name was set explicitly
// (the flag names of pacer compare, e.g. "server-delay"). It works on typed
// values; a scenario never becomes flag strings. Paradigms are set when c
// has none.
func ApplyScenario(c *Config, sc *scenario.Scenario, given func(flag string) bool) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	use := func(flag string, has bool) bool { return has && !given(flag) }
	j := &c.Job
	if use("workers", sc.Workers > 0) {
		j.Workers = sc.Workers
	}
	if use("shards", sc.Shards > 0) {
		j.Shards = sc.Shards
	}
	if use("speeds", len(sc.Speeds) > 0) {
		j.Timing.Speeds = append([]float64(nil), sc.Speeds...)
	}
	if use("jitter", sc.Jitter > 0) {
		j.Timing.Jitter = sc.Jitter
	}
	if use("straggler", sc.Straggler != "") {
		s, err := timing.ParseStraggler(sc.Straggler)
		if err != nil {
			return fmt.Errorf("scenario %s: straggler=%q: %w", sc.Name, sc.Straggler, err)
		}
		j.Timing.Straggler = s
	}
	if use("server-delay", sc.ServerDelay != "") {
		d, err := timing.ParseServerDelay(sc.ServerDelay)
		if err != nil {
			return fmt.Errorf("scenario %s: server_delay=%q: %w", sc.Name, sc.ServerDelay, err)
		}
		j.ServerDelay = d
	}
	if use("base", sc.Base != "") {
		d, auto, err := scenario.ParseBase(sc.Base) // Validate checked it
		if err != nil {
			return fmt.Errorf("scenario %s: base=%w", sc.Name, err)
		}
		j.Timing.Base, c.BaseAuto = d, auto
	}
	if use("model", sc.Model != "") {
		j.Model = sc.Model
	}
	if use("dataset", sc.Dataset != "") {
		j.Dataset = sc.Dataset
	}
	if use("epochs", sc.Epochs > 0) {
		j.Epochs = sc.Epochs
	}
	if use("batch", sc.Batch > 0 && !given("batch-total")) {
		j.Batch = sc.Batch
	}
	// Either flag replaces the scenario's batch, whichever way it gives it.
	if use("batch-total", sc.BatchTotal > 0 && !given("batch")) {
		j.BatchTotal = sc.BatchTotal
		if sc.Batch == 0 {
			j.Batch = 0 // Fill derives it from the workers
		}
	}
	if use("lr", sc.LR > 0) {
		j.LR = sc.LR
	}
	if use("momentum", sc.Momentum != nil) {
		j.Momentum = *sc.Momentum
		if j.Momentum == 0 {
			j.Momentum = -1 // job.Config: negative is plain SGD
		}
	}
	if use("optimizer", sc.Optimizer != "") {
		r, err := optim.ParseRule(sc.Optimizer) // Validate checked it
		if err != nil {
			return err
		}
		j.Optimizer = r
		if !r.Kind.TakesMomentum() && sc.Momentum == nil && !given("momentum") {
			j.Momentum = -1 // Adam and AdamW take no momentum, not the flag's default 0.9
		}
	}
	if use("eval-every", sc.EvalEvery > 0) {
		j.EvalEvery = sc.EvalEvery
	}
	if use("full-async-lr", sc.FullAsyncLR) {
		j.FullAsyncLR = true
	}
	if use("sampling", sc.Sampling != "") {
		j.Sampling = sc.Sampling
	}
	if use("normalize", sc.Normalize != "") {
		j.Normalize = sc.Normalize
	}
	if use("clip-norm", sc.ClipNorm > 0) {
		j.ClipNorm = sc.ClipNorm
	}
	if use("ema", sc.EMA > 0 && !given("ema-time")) {
		j.EMA = sc.EMA
	}
	// The scenario's average gives way to either flag: --ema and
	// --ema-time are one choice, the average's memory.
	if use("ema-time", sc.EMATime != "" && !given("ema")) {
		j.EMATime, _ = time.ParseDuration(sc.EMATime) // Validate checked it
	}
	// Sim mode trains no model, so a target has no accuracy to reach
	// there (Validate refuses one): the scenario's does not apply.
	if use("target", sc.Target > 0) && c.Mode != runstats.Sim {
		j.Target = sc.Target
	}
	if use("train-limit", sc.TrainLimit > 0) {
		j.TrainLimit = sc.TrainLimit
	}
	if use("test-limit", sc.TestLimit > 0) {
		j.TestLimit = sc.TestLimit
	}
	if use("iterations", sc.Iterations > 0) && !given("duration") {
		c.Iterations = sc.Iterations
	}
	if use("seed", sc.Seed > 0) {
		j.Seed = sc.Seed
	}
	// The live modes run in real time: one run each unless --seeds asks
	// for more (a preset's five seeds would be 40 real-time runs).
	if use("seeds", sc.Seeds > 0) && (c.Mode == runstats.Virtual || c.Mode == runstats.Sim) {
		c.Seeds = sc.Seeds
	}
	if use("horizon", sc.Horizon != "") {
		d, _ := time.ParseDuration(sc.Horizon) // Validate checked it
		switch {
		case c.Mode == runstats.Virtual:
			c.Horizon = d
		case c.Mode == runstats.Sim && !given("iterations") && !given("duration"):
			// Sim mode's equal virtual-time budget is its duration. The
			// run would stop at whichever of the two came first: refuse
			// rather than guess which one the file meant.
			if sc.Iterations > 0 {
				return fmt.Errorf("scenario %s: iterations=%d and horizon=%s are alternatives in sim mode; give --iterations or --duration to choose",
					sc.Name, sc.Iterations, sc.Horizon)
			}
			c.Duration = d
		}
		// The live modes run in real time, for the job's epochs.
	}
	// The network is one setting: any network flag on the command line
	// replaces the scenario's section whole.
	if sc.Network != nil && !given("network") && !given("link") && !given("worker-link") && !given("shard-link") && !given("apply-rate") {
		n, err := sc.Network.Spec()
		if err != nil {
			return fmt.Errorf("scenario %s: network: %w", sc.Name, err)
		}
		j.Network = n
	}
	if len(c.Specs)+len(c.Groups) == 0 {
		specs, groups, err := sc.Entries()
		if err != nil {
			return err
		}
		c.Specs, c.Groups = specs, groups
	}
	c.Scenario.Name, c.Scenario.Description = sc.Name, sc.Description
	return nil
}

// Effective is the scenario c runs, with every default and flag applied:
// what summary.json records, and a scenario file that reruns it.
func Effective(c *Config) scenario.Scenario {
	j := c.Job
	s := scenario.Scenario{Name: c.Scenario.Name, Description: c.Scenario.Description,
		Workers: j.Workers, Shards: j.Shards, Speeds: j.Timing.Speeds, Jitter: j.Timing.Jitter,
		Straggler: j.Timing.Straggler.String(), ServerDelay: j.ServerDelay.String(), Seed: j.Seed, Seeds: c.Seeds,
		Network: scenario.NetworkOf(j.Network)}
	if c.Race != nil {
		s.Seeds = 0 // a rerun of this scenario races again
	}
	if j.Timing.Base > 0 {
		s.Base = j.Timing.Base.String()
	}
	s.Paradigms = c.Names()
	if c.Mode == runstats.Sim {
		s.Iterations = c.Iterations
		if c.Duration > 0 {
			s.Horizon = c.Duration.String()
		}
		return s
	}
	m := max(0, j.Momentum)
	s.Model, s.Dataset, s.Epochs, s.Batch, s.LR, s.Momentum = j.Model, j.Dataset, j.Epochs, j.Batch, j.LR, &m
	s.EvalEvery, s.FullAsyncLR, s.Target, s.TrainLimit, s.TestLimit = j.EvalEvery, j.FullAsyncLR, j.Target, j.TrainLimit, j.TestLimit
	s.Sampling, s.ClipNorm, s.EMA, s.BatchTotal = j.Sampling, j.ClipNorm, j.EMA, j.BatchTotal
	if j.EMATime > 0 {
		s.EMATime = j.EMATime.String()
	}
	if j.Optimizer.Kind != optim.SGD {
		s.Optimizer = j.Optimizer.String()
	}
	if j.Normalize != job.NormalizeNone {
		s.Normalize = j.Normalize
	}
	if c.Horizon > 0 {
		s.Horizon = c.Horizon.String()
	}
	return s
}
