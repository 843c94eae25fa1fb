package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc), so a test asserts the
// memory a hostile file costs by what is allocated, not by timing.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// smallBound is what refusing a data set from its headers may allocate: buffers for the
// gzip and file readers and the error, nothing the size of the data.
const smallBound = 4 << 20

// hostileImages is a gzip file whose header declares n images of rows×cols and whose body holds
// zeros bytes of zeros (a few KB compressed): the decompression bomb of issue 20.
func hostileImages(t testing.TB, n, rows, cols, zeros int) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(idxBytes([]int{n, rows, cols}, nil))
	chunk := make([]byte, 1<<20)
	for left := zeros; left > 0; left -= len(chunk) {
		w.Write(chunk[:min(left, len(chunk))])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sparseIDX writes a plain IDX file of dims whose body is size bytes of zeros, without writing
// them (a sparse file): as large as the real set, nothing on disk or in the test's memory.
func sparseIDX(t testing.TB, path string, dims []int, size int64) {
	t.Helper()
	if err := os.WriteFile(path, idxBytes(dims, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(4+4*len(dims))+size); err != nil {
		t.Fatal(err)
	}
}

// Issue 20, item 3: a small gzip file declaring a million images made every process decompress
// and convert it (past 3.5 GB in 4.4 s). The header is now checked against the set's shape
// (Fashion-MNIST: 28×28, at most 60,000 training images) before the body is read, so the refusal
// allocates next to nothing; before, the reader allocated 16 MiB at once and then grew with the
// decompressed data.
func TestHostileGzipRefusedBeforeAllocating(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	files := fakeIDXFiles(t, 6, 4)
	files["train-images-idx3-ubyte.gz"] = hostileImages(t, 1_000_000, 28, 28, 32<<20)
	files["train-labels-idx1-ubyte.gz"] = gz(t, idxBytes([]int{1_000_000}, make([]byte, 1_000_000)))
	writeFiles(t, l.Dir, files)
	var err error
	n := allocated(func() { _, err = l.Load(context.Background(), "fashion-mnist") })
	if err == nil {
		t.Fatal("a file declaring 1,000,000 images was accepted")
	}
	for _, want := range []string{"train-images-idx3-ubyte.gz", "1000000 samples", "784000000 bytes", "3136000000 as float32", "60000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if n > smallBound {
		t.Errorf("refusing the file allocated %d bytes, want at most %d", n, smallBound)
	}
	t.Logf("refused after allocating %d bytes: %v", n, err)
}

// Issue 20, item 3 (and 4's data files): images of another shape than the set's are refused
// from the header, naming the shape wanted; before, 10×10 and 28×40 images loaded as
// "fashion-mnist" and reached the model.
func TestIDXShapeIsTheSets(t *testing.T) {
	for name, c := range map[string]struct {
		file string
		body []byte
		want string
	}{
		"10×10 images":       {"train-images-idx3-ubyte.gz", gz(t, idxBytes([]int{6, 10, 10}, make([]byte, 600))), "want N×[28 28] with N ≤ 60000"},
		"28×40 images":       {"t10k-images-idx3-ubyte.gz", gz(t, idxBytes([]int{4, 28, 40}, make([]byte, 4*28*40))), "want N×[28 28] with N ≤ 10000"},
		"10,001 test labels": {"t10k-labels-idx1-ubyte.gz", gz(t, idxBytes([]int{10001}, make([]byte, 10001))), "more than the 10000"},
		"labels of rank 2":   {"train-labels-idx1-ubyte.gz", gz(t, idxBytes([]int{6, 1}, make([]byte, 6))), "want N with N ≤ 60000"},
	} {
		t.Run(name, func(t *testing.T) {
			l, root := isolated(t)
			l.Dir = filepath.Join(root, "flag")
			writeFiles(t, l.Dir, fakeIDXFiles(t, 6, 4))
			writeFiles(t, l.Dir, map[string][]byte{c.file: c.body})
			for what, err := range map[string]error{"Load": load(l), "Info": info(l)} {
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.file) {
					t.Errorf("%s: %v; want an error naming %s and %q", what, err, c.file, c.want)
				}
			}
		})
	}
}

func load(l *Loader) error {
	_, err := l.Load(context.Background(), "fashion-mnist")
	return err
}

func info(l *Loader) error {
	_, err := l.Info(context.Background(), "fashion-mnist")
	return err
}

// Issue 20, item 3: labels and images are cross-checked from the headers before any body is
// read. Here the training images are a full, valid 47 MB file and the labels declare one fewer:
// before, all four files were read and converted (about 240 MB) before the counts were compared.
func TestCountsCrossCheckedBeforeBodies(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	writeFiles(t, l.Dir, fakeIDXFiles(t, 6, 4))
	for _, f := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"} {
		os.Remove(filepath.Join(l.Dir, f))
	}
	sparseIDX(t, filepath.Join(l.Dir, "train-images-idx3-ubyte"), []int{60000, 28, 28}, 60000*28*28)
	sparseIDX(t, filepath.Join(l.Dir, "train-labels-idx1-ubyte"), []int{59999}, 59999)
	var err error
	n := allocated(func() { err = load(l) })
	if err == nil || !strings.Contains(err.Error(), "60000 images but") || !strings.Contains(err.Error(), "59999 labels") {
		t.Fatalf("mismatched counts: %v", err)
	}
	if n > smallBound {
		t.Errorf("the mismatch was found after allocating %d bytes, want at most %d (headers only)", n, smallBound)
	}
}

// Issue 20, item 3: a process that needs only the counts (a server shard) reads only the
// headers. The bodies here are absent altogether: Info answers from the headers alone, while
// Load refuses the short files.
func TestInfoReadsOnlyHeaders(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, dims := range map[string][]int{
		"train-images-idx3-ubyte": {60000, 28, 28}, "train-labels-idx1-ubyte": {60000},
		"t10k-images-idx3-ubyte": {10000, 28, 28}, "t10k-labels-idx1-ubyte": {10000},
	} {
		sparseIDX(t, filepath.Join(l.Dir, name), dims, 0)
	}
	var (
		in  *Info
		err error
	)
	n := allocated(func() { in, err = l.Info(context.Background(), "mnist") })
	if err != nil {
		t.Fatal(err)
	}
	if in.TrainN != 60000 || in.TestN != 10000 || in.Dim != 784 || in.Classes != 10 || in.Source != l.Dir || in.Name != "mnist" {
		t.Errorf("Info %+v", *in)
	}
	if n > smallBound {
		t.Errorf("Info allocated %d bytes, want at most %d", n, smallBound)
	}
	if err := func() error { _, err := l.Load(context.Background(), "mnist"); return err }(); err == nil || !strings.Contains(err.Error(), "short data") {
		t.Errorf("Load of header-only files: %v, want short data", err)
	}

	// Info agrees with Load on every set.
	l, _ = isolated(t)
	writeFiles(t, filepath.Join(l.LocalDir, "fashion-mnist"), fakeIDXFiles(t, 12, 5))
	writeFiles(t, filepath.Join(l.LocalDir, "cifar10"), cifarFilesMap(3))
	for _, name := range []string{"fashion-mnist", "cifar10", "synthetic"} {
		ds, err := l.Load(context.Background(), name)
		if err != nil {
			t.Fatal(name, err)
		}
		in, err := l.Info(context.Background(), name)
		if err != nil {
			t.Fatal(name, err)
		}
		if in.TrainN != ds.Train.N || in.TestN != ds.Test.N || in.Dim != ds.Train.Dim || in.Classes != ds.Train.Classes || in.Source != ds.Source {
			t.Errorf("%s: Info %+v, Load has N %d/%d, Dim %d, Classes %d, from %s", name, *in, ds.Train.N, ds.Test.N, ds.Train.Dim, ds.Train.Classes, ds.Source)
		}
	}
}

// Issue 20, item 3: a CIFAR-10 batch is bounded by the real set's 10,000 records, before it is
// read (Info, from its size) and while it is read (Load); before, each of the six files could
// hold 1 GiB.
func TestCIFAR10BatchBounded(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	writeFiles(t, l.Dir, cifarFilesMap(2))
	big := filepath.Join(l.Dir, cifarTrain[2])
	if err := os.Truncate(big, 10001*cifarRecord); err != nil {
		t.Fatal(err)
	}
	_, ierr := l.Info(context.Background(), "cifar10")
	var lerr error
	n := allocated(func() { _, lerr = l.Load(context.Background(), "cifar10") })
	for what, err := range map[string]error{"Info": ierr, "Load": lerr} {
		if err == nil || !strings.Contains(err.Error(), "at most 10000 records") || !strings.Contains(err.Error(), big) {
			t.Errorf("%s: %v; want an error naming %s and the bound", what, err, big)
		}
	}
	// The size is checked before the file is read: before, the 30 MB were read and converted.
	if n > smallBound {
		t.Errorf("Load allocated %d bytes for a refused file", n)
	}
}
