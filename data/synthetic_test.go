package data

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestSyntheticDeterministic(t *testing.T) {
	cfg := SyntheticConfig{Train: 200, Test: 50, Dim: 32, Seed: 42}
	a, err := NewSynthetic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSynthetic(cfg)
	if !slices.Equal(a.Train.X, b.Train.X) || !slices.Equal(a.Test.Y, b.Test.Y) {
		t.Fatal("same seed, different data")
	}
	cfg.Seed = 43
	c, _ := NewSynthetic(cfg)
	if slices.Equal(a.Train.X, c.Train.X) {
		t.Fatal("different seeds, same data")
	}
	if a.Train.N != 200 || a.Test.N != 50 || a.Train.Dim != 32 || a.Train.Classes != 10 {
		t.Fatalf("shape %d/%d×%d", a.Train.N, a.Test.N, a.Train.Dim)
	}
	for class, n := range a.Train.Histogram() {
		if n != 20 {
			t.Errorf("class %d has %d samples, want 20 (balanced)", class, n)
		}
	}
}

// TestSyntheticLearnable: class means estimated on the training split classify the test split
// well (a nearest-centroid classifier, the simplest learner), but not perfectly.
func TestSyntheticLearnable(t *testing.T) {
	ds, err := Load("synthetic", "")
	if err != nil {
		t.Fatal(err)
	}
	tr, te := ds.Train, ds.Test
	if tr.N != 6000 || te.N != 1000 || tr.Dim != 784 || !strings.HasPrefix(ds.Source, "synthetic(") {
		t.Fatalf("defaults: %d/%d×%d from %s", tr.N, te.N, tr.Dim, ds.Source)
	}
	cent := make([]float64, tr.Classes*tr.Dim)
	for i := range tr.N {
		x, y := tr.Sample(i)
		for j, v := range x {
			cent[int(y)*tr.Dim+j] += float64(v)
		}
	}
	hist := tr.Histogram()
	for i := range cent {
		cent[i] /= float64(hist[i/tr.Dim])
	}
	correct := 0
	for i := range te.N {
		x, y := te.Sample(i)
		best, bestD := -1, 0.0
		for c := range tr.Classes {
			d := 0.0
			for j, v := range x {
				e := float64(v) - cent[c*tr.Dim+j]
				d += e * e
			}
			if best < 0 || d < bestD {
				best, bestD = c, d
			}
		}
		if best == int(y) {
			correct++
		}
	}
	acc := float64(correct) / float64(te.N)
	t.Logf("nearest-centroid test accuracy %.3f", acc)
	if acc < 0.85 || acc > 0.999 {
		t.Fatalf("nearest-centroid accuracy %.3f, want in [0.85, 0.999): learnable but not trivial", acc)
	}
}

func TestSyntheticBadConfig(t *testing.T) {
	for field, cfg := range map[string]SyntheticConfig{
		"Train":      {Train: -1},
		"Test":       {Test: -5},
		"Dim":        {Dim: -1},
		"Classes":    {Classes: 300},
		"Noise":      {Noise: -0.1},
		"Separation": {Separation: 2},
	} {
		_, err := (&Loader{Synthetic: cfg}).Load(context.Background(), "synthetic")
		if err == nil || !strings.Contains(err.Error(), "SyntheticConfig."+field) {
			t.Errorf("%s: error %v does not name the field", field, err)
		}
	}
}
