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

// Servers draws the extra delay of each pull response, per shard. It is not
// safe for concurrent use.
type Servers struct {
	consts   []constant
	spikes   []spike
	st       []shardState
	shards   int
	perShard int
	descr    string
}

// NewServers parses spec (see ServerForms; "" means no delay) for shards
// shards and seeds perShard streams per shard (the simulator and the live
// shards keep one per worker), so stream i's j-th response delay depends
// only on (spec, seed, i, j). Stream i belongs to shard i / perShard.
func NewServers(spec string, shards, perShard int, seed uint64) (*Servers, error) {
	if shards < 1 {
		return nil, fmt.Errorf("timing: shards = %d: want at least 1", shards)
	}
	if perShard < 1 {
		return nil, fmt.Errorf("timing: %d streams per shard: want at least 1", perShard)
	}
	s := &Servers{descr: "none", shards: shards, perShard: perShard}
	if strings.TrimSpace(spec) != "" {
		terms, err := splitTerms(spec, "server delay", ServerForms)
		if err != nil {
			return nil, err
		}
		var desc []string
		for _, t := range terms {
			d, err := s.addTerm(t)
			if err != nil {
				return nil, err
			}
			desc = append(desc, d)
		}
		s.descr = strings.Join(desc, "+")
	}
	s.st = make([]shardState, shards*perShard)
	for i := range s.st {
		st := &s.st[i]
		st.pcg = *rand.NewPCG(seed, splitmix64(uint64(i)^domainShard))
		st.rng = rand.New(&st.pcg)
	}
	return s, nil
}

func (s *Servers) addTerm(t term) (string, error) {
	const what = "server delay"
	switch t.name {
	case "spike":
		if err := t.checkKeys(what, "p", "delay", "shard"); err != nil {
			return "", err
		}
		sh, at, err := s.shardKey(t)
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
		d, err := t.duration(what, "delay", defSpikeDelay)
		if err != nil {
			return "", err
		}
		s.spikes = append(s.spikes, spike{p: p, delay: d, shard: sh})
		return fmt.Sprintf("spike:p=%s,delay=%v%s", fmtFloat(p), d, at), nil
	case "const":
		if err := t.checkKeys(what, "delay", "shard"); err != nil {
			return "", err
		}
		sh, at, err := s.shardKey(t)
		if err != nil {
			return "", err
		}
		if _, ok := t.args["delay"]; !ok {
			return "", fmt.Errorf("timing: server delay model \"const\" needs delay=DURATION (e.g. const:delay=10ms)")
		}
		d, err := t.duration(what, "delay", 0)
		if err != nil {
			return "", err
		}
		s.consts = append(s.consts, constant{delay: d, shard: sh})
		return fmt.Sprintf("const:delay=%v%s", d, at), nil
	default:
		return "", fmt.Errorf("timing: unknown server delay model %q; valid forms: %s", t.name, ServerForms)
	}
}

// shardKey reads a term's optional shard=N: the shard (-1: every one)
// and its normalized suffix.
func (s *Servers) shardKey(t term) (int, string, error) {
	if _, ok := t.args["shard"]; !ok {
		return -1, "", nil
	}
	sh, err := t.integer("server delay", "shard", 0)
	if err != nil {
		return 0, "", err
	}
	if sh < 0 || sh >= s.shards {
		return 0, "", fmt.Errorf("timing: server delay model %q: shard=%d: the job has shards 0 to %d", t.name, sh, s.shards-1)
	}
	return sh, fmt.Sprintf(",shard=%d", sh), nil
}

// Shards is the number of shards.
func (s *Servers) Shards() int { return s.shards }

// String is the normalized spec with defaults filled in ("none" when empty).
func (s *Servers) String() string { return s.descr }

// PullDelay returns the extra delay of the next pull response on stream
// (of shard stream / perShard) and advances that stream only. stream must
// be in [0, Shards()·perShard); anything else is a caller bug and panics
// like a slice index.
func (s *Servers) PullDelay(stream int) time.Duration {
	st := &s.st[stream]
	shard := stream / s.perShard
	var d time.Duration
	for _, c := range s.consts {
		if c.shard < 0 || c.shard == shard {
			d += c.delay
		}
	}
	for i := range s.spikes {
		sp := &s.spikes[i]
		// One draw per spike term per response, whatever p and whichever
		// shard it names, so runs that differ only in those consume the
		// streams alike and stay comparable.
		if st.rng.Float64() < sp.p && (sp.shard < 0 || sp.shard == shard) {
			d += sp.delay
		}
	}
	return d
}
