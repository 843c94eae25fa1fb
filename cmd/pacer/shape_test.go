package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// fakeCIFAR writes the six CIFAR-10 batch files in the binary format of the
// real set (records of a label byte and 32×32 red, then green, then blue
// bytes), n records each, into a temporary directory. Record i has class
// c = i mod 10: noise everywhere, and in channel c mod 3 the 8×8 block c
// of the image's 4×4 grid of blocks brightened, a local feature a
// convolution finds.
func fakeCIFAR(t *testing.T, n int) string {
	dir := t.TempDir()
	for f, name := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
		r := rand.New(rand.NewPCG(uint64(f), 7))
		body := make([]byte, 0, n*(1+3*32*32))
		for i := range n {
			class := i % 10
			body = append(body, byte(class))
			for ch := range 3 {
				for y := range 32 {
					for x := range 32 {
						v := r.IntN(100)
						if ch == class%3 && y/8*4+x/8 == class {
							v += 150
						}
						body = append(body, byte(v))
					}
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 18, item 1: every model takes its input shape from the data set,
// so each trains on CIFAR-10 binary files (3×32×32; before, every model
// took 784 inputs and `--dataset cifar10 --model cnn` was refused), in
// virtual time and on the live server, and learns the generated classes.
func TestEveryModelTrainsOnCIFAR10Files(t *testing.T) {
	dir := fakeCIFAR(t, 60) // 300 training and 60 test images
	type run struct{ mode, model string }
	var runs []run
	for _, m := range nn.Names() {
		runs = append(runs, run{"virtual", m})
	}
	runs = append(runs, run{"inproc", "alexnet-small"})
	for _, c := range runs {
		t.Run(c.mode+"/"+c.model, func(t *testing.T) {
			out := t.TempDir()
			_, errs, code := pacer(t, "train", "--mode", c.mode, "--dataset", "cifar10", "--data-dir", dir, "--model", c.model,
				"--epochs", "4", "--batch", "16", "--lr", "0.05", "--eval-every", "1", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var r runstats.Run
			if err := json.Unmarshal(b, &r); err != nil || r.Model != c.model {
				t.Fatalf("summary %+v, %v", r, err)
			}
			t.Logf("best test accuracy %.3f", r.BestAccuracy)
			// Chance is 0.1; each model learns the blocks in four epochs.
			if r.BestAccuracy < 0.8 {
				t.Errorf("%s on the generated CIFAR-10: best test accuracy %v, want >= 0.8", c.model, r.BestAccuracy)
			}
		})
	}
}
