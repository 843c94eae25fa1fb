package data

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeIDXFiles returns the four gzip-compressed files of a tiny MNIST-shaped set, keyed by the
// file name. Labels are i mod 10; pixel j of image i is (i+j) mod 256.
func fakeIDXFiles(t testing.TB, nTrain, nTest int) map[string][]byte {
	t.Helper()
	images := func(n int) []byte {
		px := make([]byte, n*28*28)
		for i := range n {
			for j := range 28 * 28 {
				px[i*784+j] = byte(i + j)
			}
		}
		return gz(t, idxBytes([]int{n, 28, 28}, px))
	}
	labels := func(n int) []byte {
		y := make([]byte, n)
		for i := range y {
			y[i] = byte(i % 10)
		}
		return gz(t, idxBytes([]int{n}, y))
	}
	return map[string][]byte{
		"train-images-idx3-ubyte.gz": images(nTrain),
		"train-labels-idx1-ubyte.gz": labels(nTrain),
		"t10k-images-idx3-ubyte.gz":  images(nTest),
		"t10k-labels-idx1-ubyte.gz":  labels(nTest),
	}
}

func writeFiles(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// isolated returns a Loader whose every place is under a fresh temporary directory, with
// downloads off, so no test depends on the machine's own data or network.
func isolated(t *testing.T) (*Loader, string) {
	root := t.TempDir()
	return &Loader{
		Getenv:     func(string) string { return "" },
		LocalDir:   filepath.Join(root, "local"),
		SystemDir:  filepath.Join(root, "system"),
		CacheDir:   filepath.Join(root, "cache"),
		NoDownload: true,
	}, root
}

func TestLoadFakeFashionMNIST(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	writeFiles(t, l.Dir, fakeIDXFiles(t, 12, 5))
	ds, err := l.Load(context.Background(), "fashion-mnist")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Source != l.Dir {
		t.Errorf("Source %q, want %q", ds.Source, l.Dir)
	}
	tr := ds.Train
	if tr.N != 12 || tr.Dim != 784 || tr.Classes != 10 || ds.Test.N != 5 || tr.Name != "fashion-mnist/train" {
		t.Fatalf("train %+v test N=%d", *tr.Subset(0), ds.Test.N)
	}
	x, y := tr.Sample(3)
	if y != 3 || x[0] != float32(3)/255 || x[10] != float32(13)/255 {
		t.Fatalf("sample 3: label %d x[0]=%v x[10]=%v", y, x[0], x[10])
	}
}

// TestResolutionOrder checks each place wins over every later one: --data-dir, $PACER_DATA,
// ./data/<name>, the system directory, the user cache.
func TestResolutionOrder(t *testing.T) {
	l, root := isolated(t)
	env := filepath.Join(root, "env")
	l.Getenv = func(k string) string {
		if k == "PACER_DATA" {
			return env
		}
		return ""
	}
	l.Dir = filepath.Join(root, "flag")
	dirs := []string{
		l.Dir,
		filepath.Join(env, "fashion-mnist"), // a root holding a subdirectory named after the set
		filepath.Join(l.LocalDir, "fashion-mnist"),
		filepath.Join(l.SystemDir, "fashion-mnist"),
		filepath.Join(l.CacheDir, "fashion-mnist"),
	}
	for i, d := range dirs {
		writeFiles(t, d, fakeIDXFiles(t, 10+i, 3))
	}
	for i, d := range dirs {
		ds, err := l.Load(context.Background(), "fashion-mnist")
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if ds.Source != d || ds.Train.N != 10+i {
			t.Fatalf("step %d: loaded %d samples from %s, want %d from %s", i, ds.Train.N, ds.Source, 10+i, d)
		}
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNotFoundNamesEveryPlace(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	writeFiles(t, filepath.Join(l.LocalDir, "fashion-mnist"), map[string][]byte{"train-images-idx3-ubyte.gz": {1}})
	_, err := l.Load(context.Background(), "fashion-mnist")
	if err == nil {
		t.Fatal("loaded from empty places")
	}
	msg := err.Error()
	for _, want := range []string{
		"--data-dir " + l.Dir, "$PACER_DATA (not set)", filepath.Join(l.LocalDir, "fashion-mnist"),
		filepath.Join(l.SystemDir, "fashion-mnist"), filepath.Join(l.CacheDir, "fashion-mnist"),
		fashionMNIST.baseURL, "disabled", "missing train-labels-idx1-ubyte", "no such directory",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func TestUnknownNameListsValidNames(t *testing.T) {
	_, err := Load("imagenet", t.TempDir())
	if err == nil {
		t.Fatal("unknown data set accepted")
	}
	for _, n := range Names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q lacks %q", err, n)
		}
	}
}

// TestCorruptFilesAreErrors: found but broken files stop the search with an error naming the
// file, never a panic and never a silent fall-through to the next place.
func TestCorruptFilesAreErrors(t *testing.T) {
	good := fakeIDXFiles(t, 6, 4)
	wrongDims := gz(t, idxBytes([]int{6, 784}, make([]byte, 6*784)))
	cases := map[string]struct {
		file string
		body []byte
	}{
		"truncated images": {"train-images-idx3-ubyte.gz", good["train-images-idx3-ubyte.gz"][:40]},
		"bad magic labels": {"t10k-labels-idx1-ubyte.gz", gz(t, append([]byte{9, 9, 8, 1}, 0, 0, 0, 4, 0, 1, 2, 3))},
		"label 10":         {"t10k-labels-idx1-ubyte.gz", gz(t, idxBytes([]int{4}, []byte{0, 1, 2, 10}))},
		"count mismatch":   {"train-labels-idx1-ubyte.gz", gz(t, idxBytes([]int{5}, []byte{0, 1, 2, 3, 4}))},
		"images rank 2":    {"train-images-idx3-ubyte.gz", wrongDims},
		"not gzip at all":  {"train-images-idx3-ubyte.gz", []byte("hello")},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l, root := isolated(t)
			l.Dir = filepath.Join(root, "flag")
			writeFiles(t, l.Dir, good)
			writeFiles(t, l.Dir, map[string][]byte{c.file: c.body})
			writeFiles(t, filepath.Join(l.SystemDir, "fashion-mnist"), good)
			_, err := l.Load(context.Background(), "fashion-mnist")
			if err == nil {
				t.Fatal("corrupt file accepted")
			}
			if name != "count mismatch" && !strings.Contains(err.Error(), c.file) {
				t.Errorf("error does not name %s: %v", c.file, err)
			}
		})
	}
}

func TestPlainIDXFilesAccepted(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	plain := map[string][]byte{}
	for name, b := range fakeIDXFiles(t, 7, 2) {
		m, err := ReadIDX(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		plain[strings.TrimSuffix(name, ".gz")] = idxBytes(m.Dims, m.Data)
	}
	writeFiles(t, l.Dir, plain)
	ds, err := l.Load(context.Background(), "mnist")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Train.N != 7 || ds.Test.N != 2 || ds.Train.Name != "mnist/train" {
		t.Fatalf("got N=%d/%d name %q", ds.Train.N, ds.Test.N, ds.Train.Name)
	}
}
