package archtest

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pacer-ps/pacer/"

// imports reads every package of the module (its non-test files for this
// platform) and returns each one's direct imports, the module's own by
// their path inside it ("nn/npz") and the standard library's as they are.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bench" || name == "docs") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir // a module of its own (deploy/'s tests), not one of pacer's packages
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		var imps []string
		for _, imp := range p.Imports {
			imps = append(imps, strings.TrimPrefix(imp, module))
		}
		out[filepath.ToSlash(rel)] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 15 || out["live"] == nil || out["paradigm"] == nil {
		t.Fatalf("found only %d packages: %v", len(out), out)
	}
	return out
}

// own is whether imp is a package of the module.
func own(all map[string][]string, imp string) bool { _, ok := all[imp]; return ok }

// closure is every package p imports, directly or not.
func closure(all map[string][]string, p string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, imp := range all[q] {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(p)
	return seen
}

// layer is each package's layer in docs/architecture.md's table. A package
// missing here is a new one: the test asks for its row, so the table stays
// complete.
var layer = map[string]int{
	"wire": 1, "data": 1, "optim": 1, "timing": 1, "nn": 1, "internal/kernel": 1, "internal/ratelog": 1, "internal/hugemem": 1, "internal/filecap": 1,
	"ckpt": 1, "wal": 1, "runstats": 1, "race": 1, "live/ops": 1, "live/roles": 1, "paradigm/zipline": 1, "internal/archtest": 1, "internal/tracetest": 1, "nn/npz": 1, "network": 1, "nsnet": 1, "gradnoise": 1,
	"paradigm": 2, "sim": 2, "live/membership": 2,
	"job": 3, "scenario": 3, "auto": 3, "modelfile": 3, "profile": 3, "steptime": 3, "live/proto": 3, "live/record": 3,
	"train": 4, "live": 4, "live/worker": 4,
	"launch": 5, "compare": 5,
	"report": 6, "chaos": 6, "check": 6,
	"cmd/pacer": 7,
}

// narrower are the table's rules beyond "only lower layers": the only
// pacer packages these may import (same layer included).
var narrower = map[string][]string{
	"wire": {"internal/hugemem"}, "internal/hugemem": {}, "data": {}, "optim": {"internal/kernel", "internal/hugemem"}, "timing": {}, "network": {}, "nsnet": {}, "internal/kernel": {}, "gradnoise": {"internal/kernel"}, "internal/ratelog": {}, "internal/filecap": {},
	"ckpt": {}, "wal": {}, "live/ops": {}, "live/roles": {}, "paradigm/zipline": {}, "internal/archtest": {}, "internal/tracetest": {}, "live/membership": {}, "live/proto": {"runstats", "wire", "internal/kernel"},
	"nn":          {"internal/kernel"},
	"nn/npz":      {},
	"paradigm":    {"paradigm/zipline"},
	"sim":         {"paradigm", "timing", "network", "runstats"},
	"job":         {"paradigm", "optim", "timing", "network", "data", "nn", "internal/filecap"},
	"scenario":    {"job", "paradigm", "network", "optim", "internal/filecap"},
	"runstats":    {},
	"race":        {},
	"auto":        {"sim", "paradigm", "timing", "network"},
	"check":       {"compare", "runstats", "network", "launch", "nsnet"},
	"profile":     {"runstats", "scenario"},
	"steptime":    {"nn"},
	"live/record": {"job", "live/proto", "data", "nn", "runstats"},
}

// forbidden are imports the layers alone would allow that the table rules
// out.
var forbidden = map[string][]string{
	"launch": {"train"},
	// auto's planner is handed to train (train.Options.Plan): both drive
	// sim, and neither stands on the other.
	"train": {"auto"},
}

func TestLayers(t *testing.T) {
	all := imports(t)
	for p, imps := range all {
		l, listed := layer[p]
		if !listed {
			t.Errorf("package %s has no row in docs/architecture.md's table (and no layer in this test)", p)
			continue
		}
		for _, imp := range imps {
			if !own(all, imp) {
				continue
			}
			switch only, narrow := narrower[p]; {
			case narrow && !slices.Contains(only, imp):
				t.Errorf("%s imports %s: docs/architecture.md allows it only %v", p, imp, only)
			case !narrow && layer[imp] >= l:
				t.Errorf("%s (layer %d) imports %s (layer %d): only lower layers", p, l, imp, layer[imp])
			case slices.Contains(forbidden[p], imp):
				t.Errorf("%s imports %s, which docs/architecture.md rules out", p, imp)
			}
		}
	}
}

// The runtime never reaches its launcher, virtual time or the engines,
// not even through another package.
func TestRuntimeApartFromLauncher(t *testing.T) {
	all := imports(t)
	deps := closure(all, "live")
	for _, bad := range []string{"launch", "train", "compare", "report", "sim"} {
		if deps[bad] {
			t.Errorf("live imports %s (directly or not)", bad)
		}
	}
	if deps := closure(all, "train"); deps["live"] || deps["launch"] {
		t.Errorf("train reaches the live runtime or its launcher")
	}
}

// The pure core does no I/O: paradigm, timing, the simulator, the per-run
// record it writes, the race and auto (the decision of --paradigm auto,
// which runs sim) import no file, network, process or logging package,
// not even through another package.
func TestCoreIsPure(t *testing.T) {
	all := imports(t)
	io := []string{"os", "os/exec", "os/signal", "net", "net/http", "io/fs", "log", "log/slog", "syscall"}
	for _, p := range []string{"paradigm", "paradigm/zipline", "timing", "network", "sim", "runstats", "race", "auto"} {
		for imp := range closure(all, p) {
			if slices.Contains(io, imp) {
				t.Errorf("%s imports %s (directly or not)", p, imp)
			}
		}
	}
}

// The runtime is a server, its clients and the protocol between them: the
// server (live) and the worker (live/worker) share only live/proto (and
// live/ops), never each other, not even through another package.
func TestServerApartFromClients(t *testing.T) {
	all := imports(t)
	for _, c := range [][2]string{{"live", "live/worker"}, {"live/worker", "live"}} {
		if closure(all, c[0])[c[1]] {
			t.Errorf("%s imports %s (directly or not)", c[0], c[1])
		}
	}
	for _, p := range []string{"live", "live/worker"} {
		deps := closure(all, p)
		if !deps["live/proto"] {
			t.Errorf("%s does not speak the protocol through live/proto", p)
		}
		// The worker runs on every machine of a cluster, as the server does.
		for _, bad := range []string{"launch", "train", "compare", "report", "sim"} {
			if deps[bad] {
				t.Errorf("%s imports %s (directly or not)", p, bad)
			}
		}
	}
}
