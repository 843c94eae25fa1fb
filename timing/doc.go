// Package timing draws the virtual durations that the simulator and
// virtual-time training run on: each worker's compute time per iteration
// (Workers) and each pull response's extra server delay (Servers). It is pure:
// no wall clock, no goroutines, no global random source.
//
// # Use
//
//	st, err := timing.ParseStraggler("heavytail") // --straggler, checked once
//	w, err := timing.NewWorkers(timing.WorkerSpec{
//		Speeds:    []float64{1, 2.2},   // --speeds
//		Jitter:    0.1,                 // --jitter
//		Straggler: st,
//	}, workers, seed)
//	d := w.NextAt(p, now)                // worker p's next iteration, starting at now
//
//	sd, err := timing.ParseServerDelay("spike") // --server-delay
//	s, err := timing.NewServers(sd, shards, 1, seed)
//	extra := s.PullDelay(shard)
//
// The parsed specs (Straggler, ServerDelay) are what a job carries: each
// is parsed and checked once, and travels as its text (MarshalText).
// Numbers past the bounds MaxCV, MinFactor–MaxFactor, MaxAmount and
// MaxServerDelay are refused where they are parsed.
//
// An iteration time is Base × speed(p) × body × jitter, where speed(p) is
// Speeds[p % len(Speeds)] times any slow:worker=p factor, body is 1 or a draw
// of the shiftexp or heavytail model, and jitter is a mean-1 log-normal
// multiplier (from --jitter and lognormal terms).
//
// # Straggler models (--straggler)
//
// Terms are joined with "+"; at most one of shiftexp and heavytail. Bare
// numbers are in units of Base (seconds at the default Base of 1 s); Go
// durations such as 300s are absolute and converted.
//
//   - lognormal:cv=0.1 — mean-1 log-normal multiplier with this coefficient of
//     variation; the same as --jitter, and the two compose (1+cv² multiplies).
//   - shiftexp:shift=0.8,mean=0.2 — shift + Exp(mean): a hard minimum compute
//     time plus exponential interference.
//   - heavytail:q=0.011,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25
//     — the backup-workers paper (Chen et al., Section 3.1, 100 GPUs). Body
//     uniform in [1.3, 1.8]; with probability q per worker per iteration, an
//     extra Pareto delay (scale delay, tail index alpha: P(extra > x) =
//     (delay/x)^alpha) capped at cap; with probability burst per iteration
//     index, shared by all workers, burstdelay is added to every worker.
//   - slow:worker=3,factor=4 — a persistently slow worker; repeatable.
//     With from and/or to (units of Base, or durations) it applies only to
//     the iterations that start in [from, to): a cluster that changes.
//   - roam:factor=2,every=100 — one worker at a time is factor times
//     slower; which one is drawn from the seed and the period's index every
//     `every` units (the same worker for every paradigm of a seed).
//
// Calibration of heavytail: the paper reports that in 80% of iterations the
// 98th of 100 gradients arrives within 2 s but the 100th only in 30%, and that
// the largest time seen was 310 s. Independent workers cannot give both
// numbers: if each misses 2 s with probability r, then (1-r)^100 = 0.30 forces
// P(at most 2 miss) ≈ 0.88. The iteration-level burst supplies the missing
// correlation (the paper blames contention on shared hardware and
// preemption). Analytically the defaults give 81.1% and 29.8%; the simulated
// mean arrival times of ranks 1..97 lie between 1.33 s and 1.84 s, matching
// Figure 4's "most mean times fall between 1.4 s and 1.8 s", and the mean of
// the 100th is about 8 s. The Pareto with alpha = 1 makes each straggler miss
// 2 s (the scale of 1 s already does) with a median extra of 2 s and 1% of
// events above 100 s; the cap keeps the worst near the paper's 310 s.
//
// # Server delay models (--server-delay)
//
// Delays are absolute durations; terms joined with "+" add up.
//
//   - spike:p=0.0016,delay=4s — the PSP paper (Section 4.2): 0.16% of pull
//     responses get an extra 4 s.
//   - const:delay=10ms — every response.
//
// # Determinism
//
// Every worker and every shard owns a PCG stream seeded from (seed, index),
// so worker p's i-th iteration time depends only on the spec, the seed, p
// and i, never on which other draws happened in between. Paradigms run with
// the same seed therefore see the same per-worker times (common random
// numbers), and differences in their results come from the paradigm, not from
// the noise. The heavytail burst is not a stream but a hash of (seed, i), so
// all workers agree on it at their own i-th iteration regardless of order.
// Shard streams are per shard, not per (worker, shard): which worker receives
// a spike depends on the order pulls reach the shard.
//
// # Straggler CDF
//
// SimulateArrivals and ArrivalCDF replay the paper's Figure 3 experiment:
// all workers start each iteration together, and the table records when the
// k-th fastest gradient arrives. Arrivals.WriteTable prints the CDF at chosen
// times per rank plus mean, median, p99 and max.
//
// Next costs a few to a few tens of nanoseconds and never allocates
// (BenchmarkNext); the log-normal's math.Exp is the dearest part.
package timing
