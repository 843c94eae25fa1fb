package timing

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// ServerForms lists the accepted --server-delay model forms; errors quote it.
const ServerForms = `spike[:p=0.0016,delay=4s], const[:delay=10ms], or several joined with "+" ` +
	`(e.g. const:delay=1ms+spike); delays are absolute durations and add up`

// PSP paper (Section 4.2): "0.16% of the responses of pulling have extra delays of 4 seconds".
const (
	defSpikeP     = 0.0016
	defSpikeDelay = 4 * time.Second
)

// spike adds delay to a response with probability p.
type spike struct {
	p     float64
	delay time.Duration
}

// shardState is one shard's private stream.
type shardState struct {
	pcg rand.PCG
	rng *rand.Rand
}

// Servers draws the extra delay of each pull response, per shard. It is not
// safe for concurrent use.
type Servers struct {
	constant time.Duration
	spikes   []spike
	st       []shardState
	descr    string
}

// NewServers parses spec (see ServerForms; "" means no delay) for shards
// shards and seeds one stream per shard, so shard s's i-th response delay
// depends only on (spec, seed, s, i).
func NewServers(spec string, shards int, seed uint64) (*Servers, error) {
	if shards < 1 {
		return nil, fmt.Errorf("timing: shards = %d: want at least 1", shards)
	}
	s := &Servers{descr: "none"}
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
	s.st = make([]shardState, shards)
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
		if err := t.checkKeys(what, "p", "delay"); err != nil {
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
		s.spikes = append(s.spikes, spike{p: p, delay: d})
		return fmt.Sprintf("spike:p=%s,delay=%v", fmtFloat(p), d), nil
	case "const":
		if err := t.checkKeys(what, "delay"); err != nil {
			return "", err
		}
		if _, ok := t.args["delay"]; !ok {
			return "", fmt.Errorf("timing: server delay model \"const\" needs delay=DURATION (e.g. const:delay=10ms)")
		}
		d, err := t.duration(what, "delay", 0)
		if err != nil {
			return "", err
		}
		s.constant += d
		return fmt.Sprintf("const:delay=%v", d), nil
	default:
		return "", fmt.Errorf("timing: unknown server delay model %q; valid forms: %s", t.name, ServerForms)
	}
}

// Shards is the number of shards.
func (s *Servers) Shards() int { return len(s.st) }

// String is the normalized spec with defaults filled in ("none" when empty).
func (s *Servers) String() string { return s.descr }

// PullDelay returns the extra delay of shard's next pull response and advances
// that shard's stream only. shard must be in [0, Shards()); anything else is a
// caller bug and panics like a slice index.
func (s *Servers) PullDelay(shard int) time.Duration {
	st := &s.st[shard]
	d := s.constant
	for i := range s.spikes {
		sp := &s.spikes[i]
		// One draw per spike term per response, whatever p is, so runs that
		// differ only in p consume the streams alike and stay comparable.
		if st.rng.Float64() < sp.p {
			d += sp.delay
		}
	}
	return d
}
