// Package roles tells a live process its place in a job (a shard or a
// worker, its index, its peers and tokens) from its flags, PACER_* variables
// or Kubeflow's TF_CONFIG: what `pacer server` and `pacer worker` read
// before they start, apart from the server and the worker themselves.
package roles

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Role is one process's place in a live job, as given by flags,
// environment variables or Kubeflow's TF_CONFIG.
type Role struct {
	Kind  string // "server" or "worker"
	Index int    // shard index, or worker id
	// Shards are every shard's address as workers dial them (shard 0 hosts
	// the coordinator).
	Shards []string
	// Workers is the number of workers the cluster lists (0: unknown).
	Workers int
	// Listen is the address a server binds: the port of its own entry, on
	// every interface (a pod's address is not known to itself in advance).
	Listen string
}

// tfConfig is the part of TF_CONFIG pacer reads.
type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// ParseTFConfig reads a TF_CONFIG value (Kubeflow's TFJob sets it in every
// replica): PS replicas are shard servers (ps[0] also hosts the
// coordinator), Chief/Master and Worker replicas are workers, numbered
// chief first. Other replica types (evaluator) have no pacer role.
func ParseTFConfig(s string) (Role, error) {
	var tc tfConfig
	if err := json.Unmarshal([]byte(s), &tc); err != nil {
		return Role{}, fmt.Errorf("TF_CONFIG: %v", err)
	}
	ps := tc.Cluster["ps"]
	if len(ps) == 0 {
		return Role{}, fmt.Errorf("TF_CONFIG: cluster has no ps entries (pacer's shard servers)")
	}
	chiefs := append(append([]string(nil), tc.Cluster["chief"]...), tc.Cluster["master"]...)
	r := Role{Shards: ps, Workers: len(chiefs) + len(tc.Cluster["worker"]), Index: tc.Task.Index}
	n := 0
	switch strings.ToLower(tc.Task.Type) {
	case "ps":
		r.Kind, n = "server", len(ps)
	case "worker":
		r.Kind, n = "worker", len(tc.Cluster["worker"])
		r.Index += len(chiefs)
	case "chief", "master":
		r.Kind, n = "worker", len(chiefs)
	default:
		return Role{}, fmt.Errorf("TF_CONFIG: task type %q has no pacer role (ps, chief, master, worker)", tc.Task.Type)
	}
	if tc.Task.Index < 0 || tc.Task.Index >= n {
		return Role{}, fmt.Errorf("TF_CONFIG: task %s index %d outside the cluster's %d entries", tc.Task.Type, tc.Task.Index, n)
	}
	if r.Kind == "server" {
		_, port, err := net.SplitHostPort(ps[r.Index])
		if err != nil {
			return Role{}, fmt.Errorf("TF_CONFIG: ps[%d] = %q: %v", r.Index, ps[r.Index], err)
		}
		r.Listen = net.JoinHostPort("", port)
	}
	return r, nil
}

// Env is where role settings come from after the flags: the PACER_*
// variables, then TF_CONFIG. Getenv is os.Getenv unless set (tests).
type Env struct {
	Getenv func(string) string
}

func (e Env) get(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

// Get is the variable k (os.Getenv unless Getenv is set).
func (e Env) Get(k string) string { return e.get(k) }

// Token is $PACER_TOKEN.
func (e Env) Token() string { return e.get("PACER_TOKEN") }

// ControlToken is $PACER_CONTROL_TOKEN (servers only).
func (e Env) ControlToken() string { return e.get("PACER_CONTROL_TOKEN") }

// Role resolves a process's role from the environment: PACER_INDEX
// (shard index or worker id), PACER_PEERS (comma-separated shard
// addresses), PACER_LISTEN, PACER_WORKERS; whatever they leave open comes
// from TF_CONFIG when it is set, and a StatefulSet pod's ordinal (host name
// "name-N") gives the index last. kind is "server" or "worker".
func (e Env) Role(kind string) (Role, error) {
	r := Role{Kind: kind, Index: -1}
	if tc := e.get("TF_CONFIG"); tc != "" {
		t, err := ParseTFConfig(tc)
		if err != nil {
			return Role{}, err
		}
		if t.Kind != kind {
			return Role{}, fmt.Errorf("TF_CONFIG names a %s task, but this is pacer %s", t.Kind, kind)
		}
		r = t
	}
	if v := e.get("PACER_PEERS"); v != "" {
		r.Shards = SplitList(v)
	}
	if v := e.get("PACER_LISTEN"); v != "" {
		r.Listen = v
	}
	for _, kv := range []struct {
		name string
		dst  *int
	}{{"PACER_INDEX", &r.Index}, {"PACER_WORKERS", &r.Workers}} {
		if v := e.get(kv.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Role{}, fmt.Errorf("$%s=%q is not a non-negative integer", kv.name, v)
			}
			*kv.dst = n
		}
	}
	if r.Index < 0 {
		if h := e.get("HOSTNAME"); h != "" {
			if i := strings.LastIndexByte(h, '-'); i >= 0 {
				if n, err := strconv.Atoi(h[i+1:]); err == nil && n >= 0 {
					r.Index = n
				}
			}
		}
	}
	return r, nil
}

// SplitList splits a comma-separated list of addresses, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
