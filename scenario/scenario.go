// Package scenario describes a cluster and a training job to compare
// paradigms on: the presets that encode the papers' settings, and scenario
// files (YAML or JSON) for a user's own cluster.
package scenario

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

// Scenario is what `pacer compare` runs for every paradigm. Field names are
// the scenario file's keys. Zero fields take the training defaults.
type Scenario struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Paradigms   []string `json:"paradigms"`

	Workers     int       `json:"workers"`
	Shards      int       `json:"shards,omitempty"`
	Speeds      []float64 `json:"speeds,omitempty"`
	Jitter      float64   `json:"jitter,omitempty"`
	Straggler   string    `json:"straggler,omitempty"`
	ServerDelay string    `json:"server_delay,omitempty"`
	// Base is the iteration time of a speed-1 worker, e.g. "20ms"
	// (absent: 1 s), or BaseAuto.
	Base string `json:"base,omitempty"`

	Model   string  `json:"model,omitempty"`
	Dataset string  `json:"dataset,omitempty"`
	Epochs  float64 `json:"epochs,omitempty"`
	Batch   int     `json:"batch,omitempty"`
	// BatchTotal keeps the batch summed over the workers (µλ) constant:
	// each worker's batch is it divided by the workers (job.Config).
	BatchTotal int     `json:"batch_total,omitempty"`
	LR         float64 `json:"lr,omitempty"`
	// Momentum is a pointer so a file can say 0 (plain SGD); absent means the default 0.9.
	Momentum    *float64 `json:"momentum,omitempty"`
	EvalEvery   float64  `json:"eval_every,omitempty"` // epochs between test evaluations
	FullAsyncLR bool     `json:"full_async_lr,omitempty"`
	// Sampling is shard (default) or global (job.Config.Sampling).
	Sampling string `json:"sampling,omitempty"`
	// Optimizer is job.Config.Optimizer as --optimizer writes it
	// (optim.ParseRule: "adam:b1=0.9,b2=0.999,eps=1e-08",
	// "rmsprop:centered=true", "adamw"; absent: sgd).
	Optimizer string `json:"optimizer,omitempty"`
	// Normalize is none (default) or mean (job.Config.Normalize).
	Normalize string `json:"normalize,omitempty"`
	// ClipNorm is job.Config.ClipNorm (0: none).
	ClipNorm float64 `json:"clip_norm,omitempty"`
	// EMA is job.Config.EMA (0: evaluate the weights themselves).
	EMA float64 `json:"ema,omitempty"`
	// EMATime is job.Config.EMATime as a duration, e.g. "30s" ("": none):
	// the evaluated average fades in the cluster's time.
	EMATime    string  `json:"ema_time,omitempty"`
	Target     float64 `json:"target,omitempty"`
	TrainLimit int     `json:"train_limit,omitempty"`
	TestLimit  int     `json:"test_limit,omitempty"`
	Iterations int     `json:"iterations,omitempty"` // sim mode
	Seed       uint64  `json:"seed,omitempty"`
	// Seeds is how many times every paradigm runs (seeds Seed … Seed+Seeds−1).
	Seeds int `json:"seeds,omitempty"`
	// Horizon is the virtual-time budget of every run, e.g. "45m" (virtual
	// mode; default: the time the slowest paradigm needs for Epochs).
	Horizon string `json:"horizon,omitempty"`
	// Network is the cluster's network (virtual time, sim mode, and pacer
	// check, whose live side emulates it), in the link flags' syntax;
	// absent: the command line's (by default network.DefaultLink); none:
	// true for instant transfers.
	Network *Network `json:"network,omitempty"`
}

// Network is a scenario's network section: link is every link (--link),
// worker_links and shard_links override one each ("3:rate=1Gbit"),
// apply_rate is floats a second a shard applies (absent: the default);
// none: true is instant transfers (--network none), with no other field.
type Network struct {
	None        bool     `json:"none,omitempty"`
	Link        string   `json:"link,omitempty"`
	WorkerLinks []string `json:"worker_links,omitempty"`
	ShardLinks  []string `json:"shard_links,omitempty"`
	ApplyRate   *float64 `json:"apply_rate,omitempty"`
}

// Spec is the network the section describes (nil: none, instant transfers).
func (n *Network) Spec() (*network.Spec, error) {
	if n.None {
		if n.Link != "" || len(n.WorkerLinks) > 0 || len(n.ShardLinks) > 0 || n.ApplyRate != nil {
			return nil, fmt.Errorf("none: true (instant transfers) with links or an apply rate: give one or the other")
		}
		return nil, nil
	}
	rate := network.DefaultApplyRate
	if n.ApplyRate != nil {
		rate = *n.ApplyRate
	}
	sp, err := network.ParseSpec(n.Link, n.WorkerLinks, n.ShardLinks, rate)
	if err != nil {
		return nil, err
	}
	return &sp, nil
}

// NetworkOf is the section that describes s (nil: none: true, so that a
// rerun of the scenario does not take the command line's default).
func NetworkOf(s *network.Spec) *Network {
	if s == nil {
		return &Network{None: true}
	}
	rate := s.ApplyRate
	return &Network{Link: s.Default.String(), WorkerLinks: network.Overrides(s.Workers), ShardLinks: network.Overrides(s.Shards), ApplyRate: &rate}
}

// BaseAuto is the base that asks for this machine's step time of the
// scenario's model at its batch (package steptime), measured once before
// the runs; summary.json's scenario holds the value it measured.
const BaseAuto = "auto"

// ParseBase is a base as a scenario or --base writes it: a positive
// duration of at most job.MaxBase, or BaseAuto (auto true, d 0).
func ParseBase(v string) (d time.Duration, auto bool, err error) {
	if v == BaseAuto {
		return 0, true, nil
	}
	d, err = time.ParseDuration(v)
	if err != nil || d <= 0 || d > job.MaxBase {
		return 0, false, fmt.Errorf("%q is neither a duration in (0, %s] such as 20ms nor %s (this machine's step time)", v, job.MaxBase, BaseAuto)
	}
	return d, false, nil
}

// Specs parses the scenario's paradigms: every spec a run trains, the
// groups' members included (Entries keeps the groups whole).
func (s *Scenario) Specs() ([]paradigm.Spec, error) {
	specs, groups, err := s.Entries()
	for _, g := range groups {
		specs = append(specs, g.Members...)
	}
	return specs, err
}

// Entries parses the scenario's paradigms into the single specs and the
// groups (avg(…), reported as one paradigm each).
func (s *Scenario) Entries() ([]paradigm.Spec, []paradigm.Group, error) {
	var specs []paradigm.Spec
	var groups []paradigm.Group
	for _, p := range s.Paradigms {
		if paradigm.IsGroup(p) {
			g, err := paradigm.ParseGroup(p)
			if err != nil {
				return nil, nil, err
			}
			groups = append(groups, g)
			continue
		}
		sp, err := paradigm.Parse(p)
		if err != nil {
			return nil, nil, err
		}
		specs = append(specs, sp)
	}
	return specs, groups, nil
}

// Validate checks the scenario, naming the bad field.
func (s *Scenario) Validate() error {
	if len(s.Paradigms) == 0 {
		return fmt.Errorf("scenario %q: paradigms: list at least one", s.Name)
	}
	if s.Workers < 1 {
		return fmt.Errorf("scenario %q: workers=%d: need at least 1", s.Name, s.Workers)
	}
	for _, v := range s.Speeds {
		if !(v > 0) {
			return fmt.Errorf("scenario %q: speeds: %g is not positive", s.Name, v)
		}
	}
	if s.Momentum != nil && (*s.Momentum < 0 || *s.Momentum >= 1) {
		return fmt.Errorf("scenario %q: momentum=%g must lie in [0, 1)", s.Name, *s.Momentum)
	}
	if _, err := optim.ParseRule(s.Optimizer); err != nil {
		return fmt.Errorf("scenario %q: optimizer: %w", s.Name, err)
	}
	if s.Seeds < 0 || s.Seeds > job.MaxSeeds {
		return fmt.Errorf("scenario %q: seeds=%d must lie in [1, %d] (0: the default)", s.Name, s.Seeds, job.MaxSeeds)
	}
	if s.Network != nil {
		if _, err := s.Network.Spec(); err != nil {
			return fmt.Errorf("scenario %q: network: %w", s.Name, err)
		}
	}
	if s.Base != "" {
		if _, _, err := ParseBase(s.Base); err != nil {
			return fmt.Errorf("scenario %q: base=%w", s.Name, err)
		}
	}
	if s.Horizon != "" {
		if d, err := time.ParseDuration(s.Horizon); err != nil || d <= 0 {
			return fmt.Errorf("scenario %q: horizon=%q is not a positive duration such as 45m", s.Name, s.Horizon)
		}
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"jitter", s.Jitter}, {"clip_norm", s.ClipNorm}, {"epochs", s.Epochs}, {"batch", float64(s.Batch)}, {"batch_total", float64(s.BatchTotal)}, {"lr", s.LR}, {"eval_every", s.EvalEvery}} {
		if f.v < 0 {
			return fmt.Errorf("scenario %q: %s=%g must not be negative (0: the default)", s.Name, f.key, f.v)
		}
	}
	if s.Target < 0 || s.Target > 1 {
		return fmt.Errorf("scenario %q: target=%g must be an accuracy in [0, 1]", s.Name, s.Target)
	}
	if s.EMA < 0 || s.EMA >= 1 {
		return fmt.Errorf("scenario %q: ema=%g must lie in [0, 1)", s.Name, s.EMA)
	}
	if s.EMATime != "" {
		if d, err := time.ParseDuration(s.EMATime); err != nil || d <= 0 {
			return fmt.Errorf("scenario %q: ema_time=%q is not a positive duration such as 30s", s.Name, s.EMATime)
		}
		if s.EMA > 0 {
			return fmt.Errorf("scenario %q: ema=%g and ema_time=%q: the average fades per update or in time, give one of the two", s.Name, s.EMA, s.EMATime)
		}
	}
	if s.Sampling != "" && s.Sampling != job.SamplingShard && s.Sampling != job.SamplingGlobal {
		return fmt.Errorf("scenario %q: sampling=%q: want %s or %s", s.Name, s.Sampling, job.SamplingShard, job.SamplingGlobal)
	}
	if s.Normalize != "" && s.Normalize != job.NormalizeNone && s.Normalize != job.NormalizeMean {
		return fmt.Errorf("scenario %q: normalize=%q: want %s or %s", s.Name, s.Normalize, job.NormalizeNone, job.NormalizeMean)
	}
	// A zero means the default; a negative count is an error, never
	// silently the default.
	for _, f := range []struct {
		key string
		v   int
	}{{"shards", s.Shards}, {"iterations", s.Iterations}, {"train_limit", s.TrainLimit}, {"test_limit", s.TestLimit}} {
		if f.v < 0 {
			return fmt.Errorf("scenario %q: %s=%d must not be negative (0: the default)", s.Name, f.key, f.v)
		}
	}
	specs, err := s.Specs()
	if err != nil {
		return fmt.Errorf("scenario %q: paradigms: %w", s.Name, err)
	}
	size := job.Size{Workers: s.Workers, Shards: s.Shards, Iterations: s.Iterations, Epochs: s.Epochs, Batch: s.Batch, Specs: specs,
		FastestSpeed: job.FastestSpeed(s.Speeds), Speeds: s.Speeds, Jitter: s.Jitter, Runs: max(s.Seeds, 1) * len(specs)}
	if s.Horizon != "" {
		size.Horizon, _ = time.ParseDuration(s.Horizon) // checked above
		size.Base, _, _ = ParseBase(s.Base)             // checked above; auto is checked again once measured
	}
	if err := size.Check(""); err != nil {
		return fmt.Errorf("scenario %q: %w", s.Name, err)
	}
	return nil
}

// MaxFileBytes bounds a scenario file. Its longest parts are lists with
// an entry per worker or shard (speeds, worker_links, shard_links): at
// job.MaxWorkers workers, a speed and a link spec of about 60 bytes each,
// 6 MB; 16 MiB holds that with room for YAML's indentation and comments,
// and refuses anything larger (a data file given by mistake) unread.
const MaxFileBytes = 16 << 20

// Load reads a scenario file (YAML or JSON; at most MaxFileBytes, checked
// before it is read); unknown keys are errors so a typo does not silently
// fall back to a default.
func Load(path string) (*Scenario, error) {
	b, err := filecap.Read(path, "scenario file", MaxFileBytes)
	if err != nil {
		return nil, err
	}
	var s Scenario
	if err := yaml.UnmarshalStrict(bytes.TrimSpace(b), &s); err != nil {
		return nil, fmt.Errorf("scenario file %s: %w", path, err)
	}
	if s.Name == "" {
		s.Name = path
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scenario file %s: %w", path, err)
	}
	return &s, nil
}

// Get returns a preset by name, or loads a file when name is a path.
func Get(name string) (*Scenario, error) {
	if p, ok := presets[name]; ok {
		s := p
		s.Paradigms = append([]string(nil), p.Paradigms...)
		s.Speeds = append([]float64(nil), p.Speeds...)
		if p.Momentum != nil {
			m := *p.Momentum
			s.Momentum = &m
		}
		return &s, nil
	}
	if _, err := os.Stat(name); err == nil {
		return Load(name)
	}
	return nil, fmt.Errorf("no scenario %q: give a preset (%s) or a YAML/JSON file", name, strings.Join(Names(), ", "))
}

// Names lists the presets.
func Names() []string {
	var n []string
	for k := range presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
