package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
}
