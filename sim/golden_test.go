package sim

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/timing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt from this build")

// goldenRuns are the runs whose bytes a speed-up of the simulator must not
// change: every trace event in order and the summary, for each paradigm,
// with and without the network, one shard and many, per-link overrides,
// server delays, failures, ties (no jitter) and a time horizon.
func goldenRuns(t *testing.T) map[string]Config {
	const mlp = 235146
	net := func() *network.Spec {
		return &network.Spec{Default: network.DefaultLink, ApplyRate: network.DefaultApplyRate}
	}
	uneven := func() *network.Spec {
		s := net()
		s.Workers = map[int]network.Link{3: {Rate: 1e8 / 8, Latency: 200 * time.Microsecond}, 7: {Rate: 1e9 / 8, Latency: 50 * time.Microsecond}}
		s.Shards = map[int]network.Link{1: {Rate: 2.5e9 / 8, Latency: 80 * time.Microsecond}}
		return s
	}
	fastShard := func() *network.Spec { // worker links slower than the shard's: their own rate caps a few
		return &network.Spec{Default: network.Link{Rate: 1e9 / 8, Latency: 50 * time.Microsecond},
			Shards: map[int]network.Link{0: {Rate: 10e9 / 8, Latency: 50 * time.Microsecond}}, ApplyRate: network.DefaultApplyRate}
	}
	incast := &network.Spec{Default: network.Link{Rate: 10e9 / 8, Latency: time.Nanosecond}, ApplyRate: network.DefaultApplyRate}
	j := func(x float64) timing.WorkerSpec { return timing.WorkerSpec{Jitter: x} }
	runs := map[string]Config{
		"ssp-200x1-net":       {Spec: mustSpec(t, "ssp:s=3"), Workers: 200, Timing: j(0.1), Iterations: 20, Seed: 1, Network: net(), Params: mlp},
		"ssp-200x1-none":      {Spec: mustSpec(t, "ssp:s=3"), Workers: 200, Timing: j(0.1), Iterations: 20, Seed: 1},
		"bsp-16x4-net":        {Spec: mustSpec(t, "bsp"), Workers: 16, Shards: 4, Timing: j(0.1), Iterations: 20, Seed: 2, Network: net(), Params: mlp},
		"bsp-64x1-ties-net":   {Spec: mustSpec(t, "bsp"), Workers: 64, Iterations: 10, Seed: 3, Network: net(), Params: mlp},
		"asp-64x8-uneven":     {Spec: mustSpec(t, "asp"), Workers: 64, Shards: 8, Timing: j(0.2), Iterations: 15, Seed: 4, Network: uneven(), Params: 100000},
		"asp-64x1-ties-net":   {Spec: mustSpec(t, "asp"), Workers: 64, Iterations: 10, Seed: 4, Network: net(), Params: 25000000},
		"dssp-40x2-net":       {Spec: mustSpec(t, "dssp:sl=3,su=15"), Workers: 40, Shards: 2, Timing: j(0.3), Iterations: 20, Seed: 5, Network: net(), Params: mlp},
		"elastic-20x1-net":    {Spec: mustSpec(t, "elastic:r=15"), Workers: 20, Timing: j(0.2), Iterations: 20, Seed: 6, Network: net(), Params: mlp},
		"softsync-30x3-net":   {Spec: mustSpec(t, "softsync:n=4"), Workers: 30, Shards: 3, Timing: j(0.1), Iterations: 20, Seed: 7, Network: uneven(), Params: mlp},
		"backup-20x2-fail":    {Spec: mustSpec(t, "backup:b=2"), Workers: 20, Shards: 2, Timing: j(0.1), Iterations: 20, Seed: 8, Network: net(), Params: mlp, Failures: []Failure{{Worker: 5, At: 3 * time.Second}}},
		"psp-32x32-spike":     {Spec: mustSpec(t, "psp:c=28,b=0.9"), Workers: 32, Shards: 32, Timing: j(0.05), Iterations: 30, Seed: 9, Network: net(), Params: mlp, ServerDelay: timing.MustServerDelay("spike:p=0.02,delay=4s")},
		"psp-32x32-ties":      {Spec: mustSpec(t, "psp:c=20,b=0.75"), Workers: 32, Shards: 32, Iterations: 20, Seed: 10, Network: net(), Params: 2500000},
		"psp-32x32-none":      {Spec: mustSpec(t, "psp:c=28,b=0.9"), Workers: 32, Shards: 32, Timing: j(0.05), Iterations: 30, Seed: 9, ServerDelay: timing.MustServerDelay("spike:p=0.02,delay=4s")},
		"ssp-100x1-fastshard": {Spec: mustSpec(t, "ssp:s=3"), Workers: 100, Timing: j(0.5), Iterations: 20, Seed: 12, Network: fastShard(), Params: 2500000},
		"bsp-4x1-incast":      {Spec: mustSpec(t, "bsp"), Workers: 4, Timing: timing.WorkerSpec{Base: time.Second}, Iterations: 50, Seed: 1, Network: incast, Params: 25000000},
		"ssp-100x1-duration":  {Spec: mustSpec(t, "ssp:s=3"), Workers: 100, Timing: j(0.1), Duration: 7 * time.Second, Seed: 11, Network: net(), Params: 25000000},
	}
	return runs
}

// goldenHash runs cfg and hashes every trace event in order, then the
// summary's JSON.
func goldenHash(t *testing.T, cfg Config) string {
	t.Helper()
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	cfg.Trace = func(ev Event) {
		put(uint64(ev.Kind))
		put(uint64(ev.At))
		put(uint64(ev.Worker))
		put(uint64(ev.Shard))
		put(uint64(ev.Clock))
		put(uint64(ev.Min))
		put(ev.Version)
		put(uint64(ev.N))
		put(uint64(ev.Fresh))
		put(uint64(ev.Live))
	}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(js)
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestGoldenRuns holds the simulator to the bytes recorded in
// testdata/golden.txt (written by the build before the network's
// speed-ups, -update-golden): the same seed gives the same run.
func TestGoldenRuns(t *testing.T) {
	const path = "testdata/golden.txt"
	runs := goldenRuns(t)
	got := map[string]string{}
	for name, cfg := range runs {
		got[name] = goldenHash(t, cfg)
	}
	if *updateGolden {
		var sb strings.Builder
		for _, name := range slices.Sorted(maps.Keys(got)) {
			fmt.Fprintf(&sb, "%s %s\n", name, got[name])
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, hash, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		want[name] = hash
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if w, ok := want[name]; !ok {
			t.Errorf("%s: no recorded hash in %s", name, path)
		} else if got[name] != w {
			t.Errorf("%s: trace and summary hash %s, recorded %s: the run changed", name, got[name], w)
		}
	}
	if len(want) != len(got) {
		t.Errorf("%s holds %d runs, the test %d", path, len(want), len(got))
	}
}
