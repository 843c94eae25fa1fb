package data

import (
	"context"
	"os"
	"testing"
)

const systemFashion = "/usr/share/datasets/fashion-mnist"

// loadRealFashion loads the installed Fashion-MNIST through the normal resolution order (with
// downloads off), or skips the test when the Debian package is absent.
func loadRealFashion(t *testing.T) *Dataset {
	t.Helper()
	if _, err := os.Stat(systemFashion + "/train-images-idx3-ubyte.gz"); err != nil {
		t.Skipf("real Fashion-MNIST absent from %s (apt-get install dataset-fashion-mnist): %v", systemFashion, err)
	}
	l := &Loader{Getenv: func(string) string { return "" }, LocalDir: t.TempDir(), NoDownload: true}
	ds, err := l.Load(context.Background(), "fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestRealFashionMNIST(t *testing.T) {
	ds := loadRealFashion(t)
	if ds.Source != systemFashion {
		t.Errorf("Source %q, want %q", ds.Source, systemFashion)
	}
	for _, c := range []struct {
		s       *Set
		n       int
		perClas int
	}{{ds.Train, 60000, 6000}, {ds.Test, 10000, 1000}} {
		s := c.s
		if s.N != c.n || s.Dim != 784 || s.Classes != 10 || len(s.X) != c.n*784 || len(s.Y) != c.n {
			t.Fatalf("%s: N=%d Dim=%d Classes=%d len(X)=%d", s.Name, s.N, s.Dim, s.Classes, len(s.X))
		}
		// Validate checks labels < 10 and pixels in [0, 1]; Load already ran it, this pins it.
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		for class, n := range s.Histogram() {
			if n != c.perClas {
				t.Errorf("%s: class %d has %d samples, want %d", s.Name, class, n, c.perClas)
			}
		}
		// Images use the whole byte range: some pixel is exactly 0 and some exactly 1.
		var lo, hi bool
		for _, x := range s.X {
			lo, hi = lo || x == 0, hi || x == 1
		}
		if !lo || !hi {
			t.Errorf("%s: pixel range does not reach both 0 and 1", s.Name)
		}
	}
	// The first training image is an ankle boot (class 9), as in the data set's README figure.
	if ds.Train.Y[0] != 9 {
		t.Errorf("first train label %d, want 9", ds.Train.Y[0])
	}
	// A worker's batches over the real set cover its shard exactly once per epoch.
	b, err := NewBatcher(ds.Train, BatcherConfig{Worker: 2, Workers: 3, Batch: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for range b.BatchesPerEpoch() {
		seen += b.Next().N
	}
	if seen != 20000 || b.Next().Epoch != 1 {
		t.Errorf("epoch 0 yielded %d samples, want 20000, then epoch 1", seen)
	}
}
