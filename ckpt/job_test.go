package ckpt

import (
	"os"
	"strings"
	"testing"
)

func TestReadJob(t *testing.T) {
	dir := t.TempDir()
	full := []float32{1, 2, 3, 4, 5, 6, 7}
	for i, r := range [][2]int{{0, 4}, {4, 7}} {
		s := &State{Meta: Meta{Shard: i, Shards: 2, Lo: r[0], Hi: r[1], NumParams: 7, Version: uint64(10 + i), Model: "mlp"}, Weights: full[r[0]:r[1]]}
		if _, err := Write(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	j, err := ReadJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	if j.Model != "mlp" || len(j.Shards) != 2 || j.Shards[1].Version != 11 {
		t.Fatalf("job %+v", j)
	}
	for i, v := range full {
		if j.Weights[i] != v {
			t.Fatalf("weight %d = %g, want %g", i, j.Weights[i], v)
		}
	}
	// A missing shard is named.
	os.Remove(Path(dir, 1))
	if _, err := ReadJob(dir); err == nil || !strings.Contains(err.Error(), "shard-1.ckpt") {
		t.Errorf("missing shard 1: %v", err)
	}
	// A shard of another job (another model) is refused.
	s := &State{Meta: Meta{Shard: 1, Shards: 2, Lo: 4, Hi: 7, NumParams: 7, Model: "cnn"}, Weights: full[4:]}
	Write(dir, s)
	if _, err := ReadJob(dir); err == nil {
		t.Error("a shard of another model was put together with shard 0")
	}
	if _, err := ReadJob(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no checkpoint of shard 0") {
		t.Errorf("empty directory: %v", err)
	}
}
