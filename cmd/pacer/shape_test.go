package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
)

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

// Issue 20, item 4: `--dataset cifar10 --model mlp` (3,072 features into a
// model of 784 inputs) is refused in every mode with an error naming both
// shapes. Before, virtual time refused it and the live modes trained
// silently on misaligned inputs with exit 0.
func TestModelAndDataShapesCheckedInEveryMode(t *testing.T) {
	dir := fakeCIFAR(t, 40)
	for _, mode := range []string{"virtual", "inproc"} {
		refused(t, "model mlp takes 784 inputs per sample and 10 classes, but data set cifar10/train has 3072 features",
			"train", "--mode", mode, "--dataset", "cifar10", "--model", "mlp", "--data-dir", dir, "--epochs", "0.5")
	}
	// The server shard counts the samples and checks the shape as it does.
	_, err := countTrain(job.Config{Dataset: "cifar10", Model: "mlp", DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "model mlp takes 784 inputs") || !strings.Contains(err.Error(), "3072 features") {
		t.Errorf("pacer server on cifar10 with the mlp: %v", err)
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
		n, err := countTrain(job.Config{Dataset: "fashion-mnist", Model: "mlp", DataDir: dir, TrainLimit: limit})
		if err != nil || n != want {
			t.Errorf("train limit %d: count %d, %v; want %d", limit, n, err, want)
		}
	}
	if _, err := countTrain(job.Config{Dataset: "fashion-mnist", Model: "cnn", DataDir: dir}); err != nil {
		t.Errorf("the cnn takes 28×28 images too: %v", err)
	}
}
