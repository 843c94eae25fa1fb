package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// container is the part of a pod's container the checks read.
type container struct {
	Command []string `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name      string         `json:"name"`
		Value     string         `json:"value"`
		ValueFrom map[string]any `json:"valueFrom"`
	} `json:"env"`
}

// containers finds every container list in a parsed manifest.
func containers(v any, out *[]container) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "containers" {
				b, _ := yaml.Marshal(c)
				var cs []container
				yaml.Unmarshal(b, &cs)
				*out = append(*out, cs...)
				continue
			}
			containers(c, out)
		}
	case []any:
		for _, c := range x {
			containers(c, out)
		}
	}
}

// TestManifestsSafeByDefault (issue 20, finding 10): the shipped manifests
// ran the data plane in plaintext on every interface, so the token crossed
// the pod network in clear. Every server now serves TLS on its pod's own
// address with metrics on a port of their own, every worker verifies the
// servers' certificate, and the token comes from a Secret only.
func TestManifestsSafeByDefault(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/*/*.yaml")
	if len(files) < 2 {
		t.Fatalf("manifests %v, want deploy/kubernetes and deploy/kubeflow", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []container
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			containers(v, &cs)
		}
		servers, workers := 0, 0
		for _, c := range cs {
			line := strings.Join(append(append([]string(nil), c.Command...), c.Args...), " ")
			env := map[string]string{}
			secret := map[string]bool{} // variables set from a Secret, and only from it
			for _, e := range c.Env {
				env[e.Name] = e.Value
				_, fromSecret := e.ValueFrom["secretKeyRef"]
				secret[e.Name] = fromSecret && e.Value == ""
			}
			if !secret["PACER_TOKEN"] || strings.Contains(line, "--token") {
				t.Errorf("%s: %q: the token must come from a Secret (PACER_TOKEN secretKeyRef), never a flag", f, line)
			}
			if strings.Contains(line, "--control-token") {
				t.Errorf("%s: %q: the control token on a command line", f, line)
			}
			flag := func(name string) string {
				for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
					if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
						return v
					}
				}
				return ""
			}
			switch {
			case strings.Contains(line, "pacer server"):
				servers++
				if !secret["PACER_CONTROL_TOKEN"] {
					t.Errorf("%s: server %q: want PACER_CONTROL_TOKEN from a Secret", f, line)
				}
				if flag("tls-cert") == "" || flag("tls-key") == "" || flag("tls-ca") == "" {
					t.Errorf("%s: server %q: want --tls-cert, --tls-key and --tls-ca", f, line)
				}
				listen := flag("listen")
				if listen == "" {
					listen = env["PACER_LISTEN"]
				}
				metrics := flag("metrics-addr")
				for _, a := range []string{listen, metrics} {
					if a == "" || strings.HasPrefix(a, ":") || strings.HasPrefix(a, "0.0.0.0") {
						t.Errorf("%s: server %q binds %q: want the pod's own address", f, line, a)
					}
				}
				if port(listen) == port(metrics) {
					t.Errorf("%s: data %q and metrics %q share a port", f, listen, metrics)
				}
			case strings.Contains(line, "pacer worker"):
				workers++
				if _, ok := env["PACER_CONTROL_TOKEN"]; ok {
					t.Errorf("%s: worker %q is given the control token", f, line)
				}
				if flag("tls-ca") == "" && env["PACER_TLS_CA"] == "" {
					t.Errorf("%s: worker %q: want --tls-ca (TLS on, the servers' certificate verified)", f, line)
				}
			}
		}
		if servers == 0 || workers == 0 {
			t.Errorf("%s: %d servers, %d workers", f, servers, workers)
		}
	}
}

func port(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i+1:]
	}
	return ""
}
