package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPresetsValid(t *testing.T) {
	for _, n := range Names() {
		s, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("preset %s: %v", n, err)
		}
		s.Paradigms[0] = "changed"
		if again, _ := Get(n); again.Paradigms[0] == "changed" {
			t.Errorf("preset %s shares its slice with callers", n)
		}
	}
}

func TestLoadYAMLAndJSON(t *testing.T) {
	dir := t.TempDir()
	y := filepath.Join(dir, "c.yaml")
	os.WriteFile(y, []byte("name: mine\nparadigms: [bsp, \"ssp:s=2\"]\nworkers: 3\nspeeds: [1, 1.5]\nserver_delay: spike:p=0.01,delay=1s\nmomentum: 0\neval_every: 0.1\n"), 0o644)
	s, err := Get(y)
	if err != nil || s.Workers != 3 || len(s.Paradigms) != 2 || s.Speeds[1] != 1.5 || s.ServerDelay == "" ||
		s.Momentum == nil || *s.Momentum != 0 || s.EvalEvery != 0.1 {
		t.Fatalf("yaml: %+v %v", s, err)
	}
	j := filepath.Join(dir, "c.json")
	os.WriteFile(j, []byte(`{"paradigms":["asp"],"workers":2}`), 0o644)
	if s, err := Get(j); err != nil || s.Name != j {
		t.Fatalf("json: %+v %v", s, err)
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"typo.yaml":   "paradigms: [bsp]\nworkers: 2\nworkrs: 3\n",
		"spec.yaml":   "paradigms: [ssp]\nworkers: 2\n",
		"none.yaml":   "workers: 2\n",
		"speed.yaml":  "paradigms: [bsp]\nworkers: 2\nspeeds: [1, -2]\n",
		"mom.yaml":    "paradigms: [bsp]\nworkers: 2\nmomentum: 1.5\n",
		"broken.json": "{\"paradigms\": [",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Get(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Get("no-such-preset"); err == nil || !strings.Contains(err.Error(), "pair") {
		t.Errorf("unknown preset: %v", err)
	}
}
