package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/nn"
)

// Issue 37 point 7: a file is checked against its size and the shape its
// reader expects before its values are read, so it cannot make the
// process allocate more than a valid file would. The files here are
// small: a header declaring a large array, or a sparse file.

// allocated is the bytes of heap f allocates (the heap's running total,
// so memory that was allocated and freed again counts).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// npyHeaderOf is an NPY 1.0 header for a float32 array of shape.
func npyHeaderOf(shape []int) []byte {
	sh := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(shape)), ", "), "[]")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", sh)
	dict += strings.Repeat(" ", (64-(10+len(dict)+1)%64)%64) + "\n"
	h := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)))
	return append(h, dict...)
}

// declaringNPZ writes an .npz at path whose one array, name, declares
// shape (in its NPY header and in the zip's uncompressed size, which
// agree) but holds none of its values: a file of a few hundred bytes
// that announces as many values as shape says.
func declaringNPZ(t *testing.T, path, name string, shape []int) {
	t.Helper()
	n := uint64(1)
	for _, d := range shape {
		n *= uint64(d)
	}
	h := npyHeaderOf(shape)
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, err := z.CreateRaw(&zip.FileHeader{Name: name + ".npy", Method: zip.Store,
		CompressedSize64: uint64(len(h)), UncompressedSize64: uint64(len(h)) + 4*n})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(h)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sparseFile makes a file of size bytes that holds no blocks on disk.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// refusedSmall checks that read refused the file at path with an error
// naming the file and want, allocating at most limit bytes.
func refusedSmall(t *testing.T, what, path, want string, limit uint64, read func() error) {
	t.Helper()
	var err error
	got := allocated(func() { err = read() })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v\nwant an error naming %s and %q", what, err, path, want)
	}
	t.Logf("%s: %d bytes allocated (limit %d)", what, got, limit)
	if got > limit {
		t.Errorf("%s: %d bytes allocated before the refusal, want at most %d", what, got, limit)
	}
}

const sparseSize = 1 << 30

func TestReadFlatRefusesBeforeReading(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "valid.npz")
	w := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if err := WriteFlat(valid, w); err != nil {
		t.Fatal(err)
	}
	readFlat := func(path string, n int) ([]float32, error) { return ReadFlat(path, n) }
	var rerr error
	idle := allocated(func() { _, rerr = readFlat(valid, len(w)) })
	if rerr != nil {
		t.Fatal(rerr)
	}
	limit := 2 * idle
	declares := filepath.Join(dir, "declares.npz")
	declaringNPZ(t, declares, FlatArray, []int{nn.MaxFlat})
	refusedSmall(t, "a header declaring 2^28 values", declares, "268435456 parameters", limit, func() error {
		_, err := readFlat(declares, len(w))
		return err
	})
	sparse := filepath.Join(dir, "sparse.npz")
	sparseFile(t, sparse, sparseSize)
	refusedSmall(t, "a sparse file of 1 GiB", sparse, "1073741824 bytes", limit, func() error {
		_, err := readFlat(sparse, len(w))
		return err
	})
}

func TestReadNPZRefusesBeforeReading(t *testing.T) {
	dir := t.TempDir()
	// The valid minimal file: the smallest model pacer knows.
	m, err := nn.New("cifar-net", nn.Image28)
	if err != nil {
		t.Fatal(err)
	}
	valid := filepath.Join(dir, "valid.npz")
	p := make([]float32, m.NumParams())
	m.Init(p, 1)
	if err := WriteNPZ(valid, &Model{Model: m, Params: p}); err != nil {
		t.Fatal(err)
	}
	var rerr error
	idle := allocated(func() { _, rerr = ReadNPZ(valid) })
	if rerr != nil {
		t.Fatal(rerr)
	}
	declares := filepath.Join(dir, "declares.npz")
	declaringNPZ(t, declares, "fc1.weight", []int{1 << 14, 1 << 14})
	refusedSmall(t, "a header declaring 2^28 values", declares, "fc1.weight[16384 16384]", 2*idle, func() error {
		_, err := ReadNPZ(declares)
		return err
	})
	sparse := filepath.Join(dir, "sparse.npz")
	sparseFile(t, sparse, sparseSize)
	refusedSmall(t, "a sparse file of 1 GiB", sparse, "1073741824 bytes", 2*idle, func() error {
		_, err := ReadNPZ(sparse)
		return err
	})
}

// A model file of pacer's models has at most modelArrays arrays, which
// bounds its size.
func TestModelArraysBound(t *testing.T) {
	for _, m := range candidates() {
		ts, err := nn.Tensors(m, make([]float32, m.NumParams()))
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) > modelArrays {
			t.Errorf("%s: %d arrays, more than modelArrays (%d)", m.Name(), len(ts), modelArrays)
		}
	}
}

// checkpointOf writes dir's shard-0.ckpt, the one shard of a job of n
// parameters of model, with no values (body false: a file of its header
// alone) or as a sparse file of the size the header declares.
func checkpointOf(t *testing.T, dir, model string, n int, body bool) string {
	t.Helper()
	hdr, err := json.Marshal(ckpt.Meta{Shard: 0, Shards: 1, Lo: 0, Hi: n, NumParams: n, Model: model, Paradigm: "bsp"})
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte("PACERCK1"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(hdr)))
	b = append(append(b, hdr...), 0, 0, 0, 0)
	path := ckpt.Path(dir, 0)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if body {
		if err := os.Truncate(path, int64(len(b))+4*int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestCheckpointsRefusedBeforeReading(t *testing.T) {
	// The valid minimal checkpoints: a job of pacer's smallest model.
	valid := t.TempDir()
	m, err := nn.New("cifar-net", nn.Image28)
	if err != nil {
		t.Fatal(err)
	}
	n := m.NumParams()
	st := &ckpt.State{Meta: ckpt.Meta{Shard: 0, Shards: 1, Lo: 0, Hi: n, NumParams: n, Paradigm: "bsp", Model: "cifar-net"}, Weights: make([]float32, n)}
	if _, err := ckpt.Write(valid, st); err != nil {
		t.Fatal(err)
	}
	var rerr error
	idle := allocated(func() { _, rerr = EvalFromCheckpoints(valid, false) })
	if rerr != nil {
		t.Fatal(rerr)
	}
	limit := 2 * idle
	flat := nn.FlatName(nn.MaxFlat)

	dir := t.TempDir()
	path := checkpointOf(t, dir, flat, nn.MaxFlat, false)
	refusedSmall(t, "a header declaring 2^28 values in a file without them", path, "a file of", limit, func() error {
		_, err := FromCheckpoints(dir)
		return err
	})
	dir = t.TempDir()
	checkpointOf(t, dir, "mlp", nn.MaxFlat, true)
	refusedSmall(t, "a sparse checkpoint of mlp with 2^28 parameters", dir, "268435456 parameters, model mlp has", limit, func() error {
		_, err := FromCheckpoints(dir)
		return err
	})
	dir = t.TempDir()
	checkpointOf(t, dir, flat, nn.MaxFlat, true)
	refusedSmall(t, "eval of a sparse flat checkpoint of 1 GiB", flat, "is not pacer's", limit, func() error {
		_, err := EvalFromCheckpoints(dir, false)
		return err
	})
	refusedSmall(t, "eval --average of a sparse flat checkpoint of 1 GiB", dir, "without --ema", limit, func() error {
		_, err := EvalFromCheckpoints(dir, true)
		return err
	})
}
