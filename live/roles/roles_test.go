package roles

import (
	"fmt"
	"reflect"
	"testing"
)

// tfjob is TF_CONFIG as Kubeflow's training operator sets it for a TFJob
// with 2 PS, 1 Chief and 3 Worker replicas (service names
// <job>-<type>-<index>.<namespace>.svc, port 2222).
const tfjob = `{"cluster":{"chief":["mnist-chief-0.ns.svc:2222"],
"ps":["mnist-ps-0.ns.svc:2222","mnist-ps-1.ns.svc:2222"],
"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222","mnist-worker-2.ns.svc:2222"]},
"task":{"type":"%s","index":%d},"environment":"cloud"}`

func tf(typ string, i int) string { return sprintf(tfjob, typ, i) }

func TestTFConfigRoles(t *testing.T) {
	shards := []string{"mnist-ps-0.ns.svc:2222", "mnist-ps-1.ns.svc:2222"}
	for _, c := range []struct {
		typ   string
		index int
		want  Role
	}{
		{"ps", 0, Role{Kind: "server", Index: 0, Shards: shards, Workers: 4, Listen: ":2222"}},
		{"ps", 1, Role{Kind: "server", Index: 1, Shards: shards, Workers: 4, Listen: ":2222"}},
		{"chief", 0, Role{Kind: "worker", Index: 0, Shards: shards, Workers: 4}},
		{"worker", 0, Role{Kind: "worker", Index: 1, Shards: shards, Workers: 4}},
		{"worker", 2, Role{Kind: "worker", Index: 3, Shards: shards, Workers: 4}},
	} {
		got, err := ParseTFConfig(tf(c.typ, c.index))
		if err != nil {
			t.Fatalf("%s %d: %v", c.typ, c.index, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %d: %+v, want %+v", c.typ, c.index, got, c.want)
		}
	}
}

func TestTFConfigErrors(t *testing.T) {
	for _, s := range []string{
		`not json`,
		`{"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":0}}`, // no ps
		tf("evaluator", 0),
		tf("worker", 3),
		tf("ps", -1),
		`{"cluster":{"ps":["nohostport"]},"task":{"type":"ps","index":0}}`,
	} {
		if _, err := ParseTFConfig(s); err == nil {
			t.Errorf("TF_CONFIG %s: no error", s)
		}
	}
}

func env(m map[string]string) Env { return Env{Getenv: func(k string) string { return m[k] }} }

func TestEnvRoleOrder(t *testing.T) {
	// PACER_* variables override TF_CONFIG.
	r, err := env(map[string]string{"TF_CONFIG": tf("worker", 1), "PACER_INDEX": "7"}).Role("worker")
	if err != nil || r.Index != 7 || len(r.Shards) != 2 {
		t.Fatalf("override: %+v, %v", r, err)
	}
	// Plain variables without TF_CONFIG.
	r, err = env(map[string]string{"PACER_PEERS": "a:1, b:2", "PACER_INDEX": "1", "PACER_LISTEN": ":9000"}).Role("server")
	if err != nil || r.Index != 1 || !reflect.DeepEqual(r.Shards, []string{"a:1", "b:2"}) || r.Listen != ":9000" {
		t.Fatalf("plain: %+v, %v", r, err)
	}
	// A StatefulSet pod's ordinal gives the index last.
	r, err = env(map[string]string{"HOSTNAME": "pacer-shard-3"}).Role("server")
	if err != nil || r.Index != 3 {
		t.Fatalf("ordinal: %+v, %v", r, err)
	}
	if _, err := env(map[string]string{"TF_CONFIG": tf("ps", 0)}).Role("worker"); err == nil {
		t.Error("a ps TF_CONFIG accepted for a worker")
	}
	if _, err := env(map[string]string{"PACER_INDEX": "x"}).Role("server"); err == nil {
		t.Error("PACER_INDEX=x accepted")
	}
}

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
