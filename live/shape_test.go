package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/nn"
)

// Issue 20, item 4: a live worker checks its data's shape against the model,
// as virtual time does, before its first step. Before, 10×10 images (100
// features) panicked the worker inside the MLP ("6400 inputs … want
// 50176") and 28×40 images (1,120 features) trained silently on misaligned
// inputs with exit 0.
func TestWorkerRefusesDataOfAnotherShape(t *testing.T) {
	_, tr := testServer(t, "")
	for _, c := range []struct{ dim, classes int }{{10 * 10, 10}, {28 * 40, 10}, {3 * 32 * 32, 10}, {784, 12}} {
		ds, err := data.NewSynthetic(data.SyntheticConfig{Train: 200, Test: 10, Dim: c.dim, Classes: c.classes, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: -1, Data: ds, ConnectTimeout: 5 * time.Second})
		cancel()
		if err == nil {
			t.Errorf("%d features, %d classes: the worker ran (%d pushes)", c.dim, c.classes, res.Pushes)
			continue
		}
		for _, want := range []string{"model mlp takes 784 inputs", "synthetic/train has " + strconv.Itoa(c.dim) + " features"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d features: %v lacks %q", c.dim, err, want)
			}
		}
	}
}

// fakeCIFAR writes the six CIFAR-10 batch files, n records each, into a
// temporary directory.
func fakeCIFAR(t *testing.T, n int) string {
	dir := t.TempDir()
	rec := make([]byte, 1+3*32*32)
	rec[0] = 3
	body := bytes.Repeat(rec, n)
	for _, f := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
		if err := os.WriteFile(filepath.Join(dir, f), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 18, item 1: a server builds the model for its data set's shape,
// as the workers do: on CIFAR-10 (3,072 features; before, every model took
// 784 and the server refused) each model is accepted, and counted from
// the files' sizes.
func TestServerShapesTheModelByTheData(t *testing.T) {
	dir := fakeCIFAR(t, 40)
	for _, model := range nn.Names() {
		n, err := job.CountTrain(job.Config{Dataset: "cifar10", Model: model, DataDir: dir})
		if err != nil || n != 5*40 {
			t.Errorf("pacer server on cifar10 with the %s: %d samples, %v", model, n, err)
		}
	}
}

// Issue 20, item 3: the server needs only the count of training samples
// and reads only the files' headers. The files here are headers alone,
// declaring the real set's 60,000 and 10,000 samples: before, the server
// loaded (and here refused, "short data") the whole set to count it.
func TestServerCountsFromHeaders(t *testing.T) {
	dir := t.TempDir()
	for name, dims := range map[string][]uint32{
		"train-images-idx3-ubyte": {60000, 28, 28}, "train-labels-idx1-ubyte": {60000},
		"t10k-images-idx3-ubyte": {10000, 28, 28}, "t10k-labels-idx1-ubyte": {10000},
	} {
		hdr := []byte{0, 0, 8, byte(len(dims))}
		for _, d := range dims {
			hdr = binary.BigEndian.AppendUint32(hdr, d)
		}
		if err := os.WriteFile(filepath.Join(dir, name), hdr, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for limit, want := range map[int]int{0: 60000, 500: 500, 70000: 60000} {
		n, err := job.CountTrain(job.Config{Dataset: "fashion-mnist", Model: "mlp", DataDir: dir, TrainLimit: limit})
		if err != nil || n != want {
			t.Errorf("train limit %d: count %d, %v; want %d", limit, n, err, want)
		}
	}
	if _, err := job.CountTrain(job.Config{Dataset: "fashion-mnist", Model: "cnn", DataDir: dir}); err != nil {
		t.Errorf("the cnn takes 28×28 images too: %v", err)
	}
}
