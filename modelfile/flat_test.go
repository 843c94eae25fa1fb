package modelfile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/nn/npz"
)

func writeTensors(t *testing.T, path string, ts []npz.Tensor) {
	t.Helper()
	var b bytes.Buffer
	if err := npz.Write(&b, ts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFlatFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := []float32{1.5, -2, 0, 3e-8}
	path := filepath.Join(dir, "init.npz")
	if err := WriteFlat(path, w); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFlat(path, len(w))
	if err != nil || !slices.Equal(got, w) {
		t.Fatalf("ReadFlat = %v, %v; want %v", got, err, w)
	}
	// A flat file is no model file of pacer's own: eval says what to do.
	if _, err := ReadNPZ(path); err == nil || !strings.Contains(err.Error(), "pacer.torch.load_flat") {
		t.Errorf("ReadNPZ of a flat file: %v", err)
	}
}

func TestReadFlatRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		ts   []npz.Tensor
		want string
	}{
		{"two arrays", []npz.Tensor{{Name: "flat", Shape: []int{1}, Data: []float32{1}}, {Name: "b", Shape: []int{1}, Data: []float32{1}}}, "holds flat[1], b[1]"},
		{"other name", []npz.Tensor{{Name: "weights", Shape: []int{2}, Data: []float32{1, 2}}}, `named "flat"`},
		{"2-D", []npz.Tensor{{Name: "flat", Shape: []int{1, 2}, Data: []float32{1, 2}}}, "1-D float32"},
		{"NaN", []npz.Tensor{{Name: "flat", Shape: []int{2}, Data: []float32{1, float32(math.NaN())}}}, "parameter 1 is NaN"},
		{"Inf", []npz.Tensor{{Name: "flat", Shape: []int{2}, Data: []float32{float32(math.Inf(-1)), 0}}}, "parameter 0 is -Inf"},
		{"empty", []npz.Tensor{{Name: "flat", Shape: []int{0}, Data: []float32{}}}, "0 parameters; the model has 2"},
		{"longer", []npz.Tensor{{Name: "flat", Shape: []int{3}, Data: []float32{1, 2, 3}}}, "3 parameters; the model has 2"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".npz")
		writeTensors(t, path, tc.ts)
		if _, err := ReadFlat(path, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadFlat(filepath.Join(dir, "missing.npz"), 2); err == nil {
		t.Error("a missing file: no error")
	}
}

// A flat job's shard checkpoints put together are its vector; the export
// is a flat file (a valid --init), and pacer eval refuses to guess.
func TestFlatFromCheckpoints(t *testing.T) {
	dir := t.TempDir()
	w := make([]float32, 11)
	for i := range w {
		w[i] = float32(i) - 5
	}
	name := nn.FlatName(len(w))
	for i, r := range [][2]int{{0, 5}, {5, 11}} {
		st := &ckpt.State{Meta: ckpt.Meta{Shard: i, Shards: 2, Lo: r[0], Hi: r[1], NumParams: len(w), Version: 9, Paradigm: "bsp", Model: name},
			Weights: w[r[0]:r[1]]}
		if _, err := ckpt.Write(dir, st); err != nil {
			t.Fatal(err)
		}
	}
	m, err := FromCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != name || m.NumParams() != len(w) || m.Model != nil || !slices.Equal(m.Params, w) {
		t.Fatalf("FromCheckpoints = %s, %d params %v", m.Name(), m.NumParams(), m.Params)
	}
	out := filepath.Join(t.TempDir(), "model.npz")
	if err := WriteNPZ(out, m); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFlat(out, len(w)); err != nil || !slices.Equal(got, w) {
		t.Fatalf("the export read back: %v, %v", got, err)
	}
	set := &data.Set{Name: "x", N: 1, Dim: 784, Classes: 10, X: make([]float32, 784), Y: []uint8{0}}
	if _, err := Accuracy(m, set); err == nil || !strings.Contains(err.Error(), "is not pacer's") {
		t.Errorf("Accuracy of a flat model: %v", err)
	}
}

// A job run with --ema checkpoints θ̄ beside θ: AverageFromCheckpoints puts
// its blocks together as FromCheckpoints does the weights', and refuses
// checkpoints of which any shard's holds none.
func TestAverageFromCheckpoints(t *testing.T) {
	w := make([]float32, 11)
	avg := make([]float32, 11)
	for i := range w {
		w[i], avg[i] = float32(i)-5, float32(i)/4
	}
	name := nn.FlatName(len(w))
	write := func(dir string, ema [2]bool) {
		for i, r := range [][2]int{{0, 5}, {5, 11}} {
			st := &ckpt.State{Meta: ckpt.Meta{Shard: i, Shards: 2, Lo: r[0], Hi: r[1], NumParams: len(w), Version: 9, Paradigm: "bsp", Model: name},
				Weights: w[r[0]:r[1]]}
			if ema[i] {
				st.EMA = avg[r[0]:r[1]]
			}
			if _, err := ckpt.Write(dir, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	write(dir, [2]bool{true, true})
	m, err := AverageFromCheckpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != name || !slices.Equal(m.Params, avg) {
		t.Fatalf("AverageFromCheckpoints = %s %v, want %v", m.Name(), m.Params, avg)
	}
	if m, err := FromCheckpoints(dir); err != nil || !slices.Equal(m.Params, w) {
		t.Fatalf("FromCheckpoints of the same files: %v, want the weights", err)
	}
	for _, ema := range [][2]bool{{false, false}, {true, false}} {
		dir := t.TempDir()
		write(dir, ema)
		if _, err := AverageFromCheckpoints(dir); err == nil || !strings.Contains(err.Error(), "without --ema") {
			t.Errorf("shards with average %v: %v, want a refusal naming --ema", ema, err)
		}
	}
}
