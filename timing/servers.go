package timing

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// ServerForms lists the accepted --server-delay model forms; errors quote it.
const ServerForms = `spike[:p=0.0016,delay=4s], const[:delay=10ms], either with shard=N to delay that shard only, ` +
	`or several joined with "+" (e.g. const:delay=1ms+spike:shard=2); delays are absolute durations and add up`

// PSP paper (Section 4.2): "0.16% of the responses of pulling have extra delays of 4 seconds".
const (
	defSpikeP     = 0.0016
	defSpikeDelay = 4 * time.Second
)

// spike adds delay to a response with probability p (of shard only, when
// shard ≥ 0).
type spike struct {
	p     float64
	delay time.Duration
	shard int
}

// constant adds delay to every response (of shard only, when shard ≥ 0):
// pacer profile fits one per shard, as a slow server is one machine.
type constant struct {
	delay time.Duration
	shard int
}

// shardState is one shard's private stream.
type shardState struct {
	pcg rand.PCG
	rng *rand.Rand
}

// MaxServerDelay bounds each delay of a server-delay term
// (docs/paradigms.md, Limits): a pull reply held an hour is far past any
// measured server (the PSP paper's spikes are 4 s), and the terms' sum
// stays far from overflowing the clock.
const MaxServerDelay = time.Hour

// ServerDelay is a parsed server-delay spec (--server-delay; see
// ServerForms): the typed value a job carries, checked once where it is
// parsed. Its text, as written, is its serialized form (MarshalText), so
// job descriptions and summary.json read as they did when it was a
// string. A term's shard=N is checked against the job's shards by Check.
// The zero value is no delay.
type ServerDelay struct {
	text   string
	consts []constant
	spikes []spike
	descr  string
}

// ParseServerDelay parses and checks spec ("" is no delay).
func ParseServerDelay(spec string) (ServerDelay, error) {
	d := ServerDelay{text: spec}
	if strings.TrimSpace(spec) == "" {
		return d, nil
	}
	terms, err := splitTerms(spec, "server delay", ServerForms)
	if err != nil {
		return ServerDelay{}, err
	}
	var desc []string
	for _, t := range terms {
		s, err := d.addTerm(t)
		if err != nil {
			return ServerDelay{}, err
		}
		desc = append(desc, s)
	}
	d.descr = strings.Join(desc, "+")
	return d, nil
}

// MustServerDelay is ParseServerDelay for specs known to be valid
// (presets, tests); it panics on an error.
func MustServerDelay(spec string) ServerDelay {
	d, err := ParseServerDelay(spec)
	if err != nil {
		panic(err)
	}
	return d
}

// String is the spec as written.
func (d ServerDelay) String() string { return d.text }

// IsZero reports whether d delays nothing.
func (d ServerDelay) IsZero() bool { return len(d.consts) == 0 && len(d.spikes) == 0 }

// MarshalText writes the spec as written.
func (d ServerDelay) MarshalText() ([]byte, error) { return []byte(d.text), nil }

// UnmarshalText parses a spec MarshalText wrote (or any other).
func (d *ServerDelay) UnmarshalText(b []byte) error {
	v, err := ParseServerDelay(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Check refuses a term's shard=N that a job of shards does not have.
func (d ServerDelay) Check(shards int) error {
	if shards < 1 {
		return fmt.Errorf("timing: shards = %d: want at least 1", shards)
	}
	check := func(name string, sh int) error {
		if sh >= shards {
			return fmt.Errorf("timing: server delay model %q: shard=%d: the job has shards 0 to %d", name, sh, shards-1)
		}
		return nil
	}
	for _, c := range d.consts {
		if err := check("const", c.shard); err != nil {
			return err
		}
	}
	for _, s := range d.spikes {
		if err := check("spike", s.shard); err != nil {
			return err
		}
	}
	return nil
}

func (d *ServerDelay) addTerm(t term) (string, error) {
	const what = "server delay"
	switch t.name {
	case "spike":
		if err := t.checkKeys(what, "p", "delay", "shard"); err != nil {
			return "", err
		}
		sh, at, err := shardKey(t)
		if err != nil {
			return "", err
		}
		p, err := t.number(what, "p", defSpikeP)
		if err != nil {
			return "", err
		}
		if p < 0 || p > 1 {
			return "", fmt.Errorf("timing: server delay model \"spike\": p=%g must be a probability in [0, 1]", p)
		}
		dl, err := t.duration(what, "delay", defSpikeDelay)
		if err != nil {
			return "", err
		}
		d.spikes = append(d.spikes, spike{p: p, delay: dl, shard: sh})
		return fmt.Sprintf("spike:p=%s,delay=%v%s", fmtFloat(p), dl, at), nil
	case "const":
		if err := t.checkKeys(what, "delay", "shard"); err != nil {
			return "", err
		}
		sh, at, err := shardKey(t)
		if err != nil {
			return "", err
		}
		if _, ok := t.args["delay"]; !ok {
			return "", fmt.Errorf("timing: server delay model \"const\" needs delay=DURATION (e.g. const:delay=10ms)")
		}
		dl, err := t.duration(what, "delay", 0)
		if err != nil {
			return "", err
		}
		d.consts = append(d.consts, constant{delay: dl, shard: sh})
		return fmt.Sprintf("const:delay=%v%s", dl, at), nil
	default:
		return "", fmt.Errorf("timing: unknown server delay model %q; valid forms: %s", t.name, ServerForms)
	}
}

// shardKey reads a term's optional shard=N: the shard (-1: every one)
// and its normalized suffix.
func shardKey(t term) (int, string, error) {
	if _, ok := t.args["shard"]; !ok {
		return -1, "", nil
	}
	sh, err := t.integer("server delay", "shard", 0)
	if err != nil {
		return 0, "", err
	}
	return sh, fmt.Sprintf(",shard=%d", sh), nil
}

// Servers draws the extra delay of each pull response, per shard. It is not
// safe for concurrent use.
type Servers struct {
	d        ServerDelay
	st       []shardState
	shards   int
	perShard int
}

// NewServers draws d's delays for shards shards, with perShard streams per
// shard (the simulator and the live shards keep one per worker), so stream
// i's j-th response delay depends only on (spec, seed, i, j). Stream i
// belongs to shard i / perShard.
func NewServers(d ServerDelay, shards, perShard int, seed uint64) (*Servers, error) {
	if err := d.Check(shards); err != nil {
		return nil, err
	}
	if perShard < 1 {
		return nil, fmt.Errorf("timing: %d streams per shard: want at least 1", perShard)
	}
	s := &Servers{d: d, shards: shards, perShard: perShard}
	s.st = make([]shardState, shards*perShard)
	for i := range s.st {
		st := &s.st[i]
		st.pcg = *rand.NewPCG(seed, splitmix64(uint64(i)^domainShard))
		st.rng = rand.New(&st.pcg)
	}
	return s, nil
}

// Shards is the number of shards.
func (s *Servers) Shards() int { return s.shards }

// String is the normalized spec with defaults filled in ("none" when empty).
func (s *Servers) String() string {
	if s.d.descr == "" {
		return "none"
	}
	return s.d.descr
}

// PullDelay returns the extra delay of the next pull response on stream
// (of shard stream / perShard) and advances that stream only. stream must
// be in [0, Shards()·perShard); anything else is a caller bug and panics
// like a slice index.
func (s *Servers) PullDelay(stream int) time.Duration {
	st := &s.st[stream]
	shard := stream / s.perShard
	var d time.Duration
	for _, c := range s.d.consts {
		if c.shard < 0 || c.shard == shard {
			d += c.delay
		}
	}
	for i := range s.d.spikes {
		sp := &s.d.spikes[i]
		// One draw per spike term per response, whatever p and whichever
		// shard it names, so runs that differ only in those consume the
		// streams alike and stay comparable.
		if st.rng.Float64() < sp.p && (sp.shard < 0 || sp.shard == shard) {
			d += sp.delay
		}
	}
	return d
}
