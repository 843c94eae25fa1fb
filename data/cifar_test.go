package data

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// cifarBatch builds n records; record i has label (i+off) mod 10 and pixel j = (i+j) mod 256.
func cifarBatch(n, off int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteByte(byte((i + off) % 10))
		for j := range cifarDim {
			b.WriteByte(byte(i + j))
		}
	}
	return b.Bytes()
}

func cifarFilesMap(perFile int) map[string][]byte {
	files := map[string][]byte{cifarTest: cifarBatch(perFile, 7)}
	for k, name := range cifarTrain {
		files[name] = cifarBatch(perFile, k)
	}
	return files
}

func TestLoadCIFAR10(t *testing.T) {
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	// The official archive's directory name under --data-dir is accepted.
	dir := filepath.Join(l.Dir, "cifar10", "cifar-10-batches-bin")
	writeFiles(t, dir, cifarFilesMap(3))
	ds, err := l.Load(context.Background(), "cifar10")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Source != dir || ds.Train.N != 15 || ds.Test.N != 3 || ds.Train.Dim != 3072 || ds.Train.Classes != 10 {
		t.Fatalf("source %s N=%d/%d dim %d", ds.Source, ds.Train.N, ds.Test.N, ds.Train.Dim)
	}
	// Sample 4 is record 1 of data_batch_2: label (1+1) mod 10, first red pixel 1, first
	// green pixel (1+1024) mod 256.
	x, y := ds.Train.Sample(4)
	if y != 2 || x[0] != float32(1)/255 || x[1024] != float32((1+1024)%256)/255 {
		t.Fatalf("sample 4: label %d, x[0]=%v, x[1024]=%v", y, x[0], x[1024])
	}
	if _, y := ds.Test.Sample(0); y != 7 {
		t.Fatalf("test label %d, want 7", y)
	}
}

func TestCIFAR10Malformed(t *testing.T) {
	good := cifarBatch(2, 0)
	badLabel := cifarBatch(2, 0)
	badLabel[cifarRecord] = 10
	for name, in := range map[string][]byte{
		"empty":      {},
		"short":      good[:len(good)-1],
		"long":       append(append([]byte{}, good...), 0),
		"label 10":   badLabel,
		"one header": {3},
	} {
		if _, _, err := ReadCIFAR10(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	l, root := isolated(t)
	l.Dir = filepath.Join(root, "flag")
	files := cifarFilesMap(2)
	files["data_batch_3.bin"] = files["data_batch_3.bin"][:100]
	writeFiles(t, l.Dir, files)
	if _, err := l.Load(context.Background(), "cifar10"); err == nil || !strings.Contains(err.Error(), "data_batch_3.bin") {
		t.Fatalf("truncated batch: %v", err)
	}
}

func TestCIFAR10NotFoundExplains(t *testing.T) {
	l, _ := isolated(t)
	_, err := l.Load(context.Background(), "cifar10")
	if err == nil || !strings.Contains(err.Error(), "no download for cifar10") || !strings.Contains(err.Error(), "cifar-10-batches-bin") {
		t.Fatalf("error: %v", err)
	}
}

// Every data set's image shape is known by name and holds its features: the synthetic set's
// default dimension and the shapes its files must declare.
func TestImageOf(t *testing.T) {
	for name, want := range map[string]Image{
		"fashion-mnist": {1, 28, 28}, "mnist": {1, 28, 28}, "cifar10": {3, 32, 32}, "CIFAR-10": {3, 32, 32},
		"synthetic": {1, 28, 28},
	} {
		got, err := ImageOf(name)
		if err != nil || got != want {
			t.Errorf("ImageOf(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	if im, _ := ImageOf("fashion-mnist"); im.C*im.H*im.W != fashionMNIST.rows*fashionMNIST.cols {
		t.Errorf("fashion-mnist image %v", im)
	}
	if im, _ := ImageOf("cifar10"); im.C*im.H*im.W != cifarDim {
		t.Errorf("cifar10 image %v holds not %d features", im, cifarDim)
	}
	if im, _ := ImageOf("synthetic"); im.C*im.H*im.W != (SyntheticConfig{}).withDefaults().Dim {
		t.Errorf("synthetic image %v, default dimension %d", im, (SyntheticConfig{}).withDefaults().Dim)
	}
	for _, name := range Names {
		if _, err := ImageOf(name); err != nil {
			t.Errorf("ImageOf(%q): %v", name, err)
		}
	}
	if _, err := ImageOf("imagenet"); err == nil || !strings.Contains(err.Error(), "cifar10") {
		t.Errorf("ImageOf(imagenet) = %v, want an error listing the names", err)
	}
}
