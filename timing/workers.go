package timing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// DefaultBase is the mean iteration time of a speed-1 worker when WorkerSpec.Base is zero.
const DefaultBase = time.Second

// WorkerSpec describes how long workers take per iteration (the sim's
// --speeds, --jitter and --straggler flags).
type WorkerSpec struct {
	// Base is the iteration time of a speed-1 worker without straggler
	// effects; zero means DefaultBase. Straggler-model amounts given as bare
	// numbers are in units of Base.
	Base time.Duration
	// Speeds are per-worker time multipliers, cycled over the workers
	// (worker p uses Speeds[p%len(Speeds)]); empty means all 1. A worker with
	// speed 2.2 takes 2.2 times as long per iteration.
	Speeds []float64
	// Jitter is the coefficient of variation of a mean-1 log-normal
	// multiplier applied to every iteration; 0 means none.
	Jitter float64
	// Draws are measured multipliers of a worker's mean iteration time
	// (Window.Read's): every iteration draws one of them uniformly, in
	// place of Jitter (not with it), so a cluster's measured spread,
	// heavy tail and all, is what a prediction runs on. At most
	// MaxDraws, each finite in (0, MaxDraw]. A prediction's, never a
	// job's: it does not travel with the spec.
	Draws []float64 `json:"-"`
	// Straggler is the straggler model (see StragglerForms); the zero
	// value is none.
	Straggler Straggler
}

// workerState is one worker's private stream; nothing else reads or advances it.
type workerState struct {
	pcg  rand.PCG
	rng  *rand.Rand
	mult float64 // Base in ns × speed × slow factor
	iter uint64  // iterations drawn so far; keys the shared burst draw
	// windows are this worker's slow terms bounded in time.
	windows []window
}

// Workers draws per-worker iteration times. It is not safe for concurrent use
// (the simulator is single-threaded); give each goroutine its own Workers if needed.
type Workers struct {
	m        *model
	st       []workerState
	burstKey uint64 // hashed seed for the shared per-iteration burst draw
	roamKey  uint64 // hashed seed for the roaming straggler's draw per period
	base     time.Duration
	draws    []float64
	descr    string
}

// Stream domains keep worker, shard and burst streams apart for the same seed.
const (
	domainWorker = 0x9e3779b97f4a7c15
	domainShard  = 0xc2b2ae3d27d4eb4f
	domainBurst  = 0x165667b19e3779f9
	domainRoam   = 0x27d4eb2f165667c5
)

// splitmix64 is a bijective mixer; it turns (seed, index) into well-spread
// stream keys and is the stateless hash behind the shared burst draw.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Check validates spec for n workers: what NewWorkers would refuse, so a
// job is refused before it starts rather than where its workers start.
func (spec WorkerSpec) Check(n int) error {
	_, _, _, err := spec.compile(n)
	return err
}

// compile is spec's model, effective Base and speeds for n workers.
func (spec WorkerSpec) compile(n int) (*model, time.Duration, []float64, error) {
	if n < 1 {
		return nil, 0, nil, fmt.Errorf("timing: workers = %d: want at least 1", n)
	}
	base := spec.Base
	if base == 0 {
		base = DefaultBase
	}
	if base < 0 {
		return nil, 0, nil, fmt.Errorf("timing: Base = %v: want a positive duration (0 means %v)", spec.Base, DefaultBase)
	}
	speeds := spec.Speeds
	if len(speeds) == 0 {
		speeds = []float64{1}
	}
	if len(spec.Draws) > MaxDraws || (len(spec.Draws) > 0 && spec.Jitter != 0) {
		return nil, 0, nil, fmt.Errorf("timing: %d measured draws with jitter %v: want at most %d, and no jitter beside them", len(spec.Draws), spec.Jitter, MaxDraws)
	}
	for i, d := range spec.Draws {
		if !(d > 0 && d <= MaxDraw) {
			return nil, 0, nil, fmt.Errorf("timing: Draws[%d] = %v: want a multiplier in (0, %v]", i, d, MaxDraw)
		}
	}
	for i, s := range speeds {
		if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
			return nil, 0, nil, fmt.Errorf("timing: Speeds[%d] (--speeds) = %v: want a finite multiplier > 0", i, s)
		}
	}
	m, err := spec.Straggler.compile(spec.Jitter, base, n)
	if err != nil {
		return nil, 0, nil, err
	}
	return m, base, speeds, nil
}

// NewWorkers validates spec for n workers and seeds one stream per worker, so
// worker p's i-th time depends only on (spec, seed, p, i): never on how draws of
// different workers interleave, hence never on the paradigm (common random numbers).
func NewWorkers(spec WorkerSpec, n int, seed uint64) (*Workers, error) {
	m, base, speeds, err := spec.compile(n)
	if err != nil {
		return nil, err
	}
	w := &Workers{m: m, st: make([]workerState, n), burstKey: splitmix64(seed ^ domainBurst),
		roamKey: splitmix64(seed ^ domainRoam), base: base, draws: slices.Clone(spec.Draws)}
	for p := range w.st {
		s := &w.st[p]
		s.pcg = *rand.NewPCG(seed, splitmix64(uint64(p)^domainWorker))
		s.rng = rand.New(&s.pcg)
		s.mult = float64(base) * speeds[p%len(speeds)]
		if f, ok := m.slow[p]; ok {
			s.mult *= f
		}
		for _, x := range m.windows {
			if x.worker == p {
				s.windows = append(s.windows, x)
			}
		}
	}
	w.descr = fmt.Sprintf("base=%v speeds=%v jitter=%s straggler=%s", base, speeds, fmtFloat(spec.Jitter), m)
	if len(w.draws) > 0 {
		w.descr += fmt.Sprintf(" draws=%d measured", len(w.draws))
	}
	return w, nil
}

// N is the number of workers.
func (w *Workers) N() int { return len(w.st) }

// Base is the effective Base (DefaultBase when the spec left it zero).
func (w *Workers) Base() time.Duration { return w.base }

// String describes the configuration with all defaults filled in, for run reports.
func (w *Workers) String() string { return w.descr }

// Varies reports whether the model changes over the job's time (slow
// terms with from or to, a roaming straggler): then an iteration's time
// depends on when it starts, and every caller must pass the true now.
func (w *Workers) Varies() bool { return len(w.m.windows) > 0 || w.m.roamEvery > 0 }

// Roamer is the worker the roaming straggler slows at model time now (-1:
// none roams).
func (w *Workers) Roamer(now time.Duration) int {
	if w.m.roamEvery <= 0 || now < 0 {
		return -1
	}
	return int(splitmix64(w.roamKey+uint64(now/w.m.roamEvery)) % uint64(len(w.st)))
}

// NextAt returns the time of worker p's next iteration, which starts at
// now (the job's model time: virtual time in the simulator, the time since
// the worker's first iteration in units of its base live), and advances
// p's stream only. A window or a roaming straggler applies by the
// iteration's start, whole: an iteration that starts just before a
// slowdown runs at the old speed (the error is one iteration's time at
// each change, docs/sim.md). p must be in [0, N()); anything else is a
// caller bug and panics like a slice index.
func (w *Workers) NextAt(p int, now time.Duration) time.Duration {
	s := &w.st[p]
	m := w.m
	f := s.mult
	for _, x := range s.windows {
		if now >= x.from && now < x.to {
			f *= x.factor
		}
	}
	if m.roamEvery > 0 && w.Roamer(now) == p {
		f *= m.roamFactor
	}
	switch m.body {
	case bodyShiftExp:
		f *= m.shift + m.expMean*s.rng.ExpFloat64()
	case bodyHeavy:
		x := m.lo + (m.hi-m.lo)*s.rng.Float64()
		if m.q > 0 && s.rng.Float64() < m.q {
			// Inverse-CDF Pareto draw; 1-U lies in (0, 1] so the power is finite.
			x += math.Min(m.xm*math.Pow(1-s.rng.Float64(), m.negInvAlpha), m.capAt)
		}
		if m.burst > 0 && burstU(w.burstKey, s.iter) < m.burst {
			x += m.burstDelay
		}
		f *= x
	}
	if m.sigma > 0 {
		f *= math.Exp(m.mu + m.sigma*s.rng.NormFloat64())
	}
	if len(w.draws) > 0 {
		f *= w.draws[s.rng.IntN(len(w.draws))]
	}
	s.iter++
	return toDuration(f)
}

// burstU is the shared uniform for iteration i: a hash, not a stream, so every
// worker sees the same value at its own i-th iteration regardless of order.
func burstU(key, i uint64) float64 {
	return float64(splitmix64(key+i)>>11) / (1 << 53)
}

// toDuration rounds nanoseconds to a Duration, saturating instead of overflowing.
func toDuration(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns + 0.5)
}
