package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CIFAR-10 binary format: records of one label byte then 32×32 red, 32×32 green and 32×32 blue
// bytes. Features keep that channel-major (CHW) order.
const (
	cifarChannels = 3
	cifarSide     = 32
	cifarDim      = cifarChannels * cifarSide * cifarSide
	cifarRecord   = 1 + cifarDim
	cifarFiles    = 5
	// cifarMaxRecords bounds each batch file by the real set's (10,000 images each), so a
	// file cannot make a process read and convert more than the real set.
	cifarMaxRecords = 10000
)

var cifarTrain = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}

const cifarTest = "test_batch.bin"

// ReadCIFAR10 parses one CIFAR-10 binary batch file into features in [0, 1] and labels.
// The length must be a whole number of records.
func ReadCIFAR10(r io.Reader) (x []float32, y []uint8, err error) {
	raw, err := io.ReadAll(io.LimitReader(r, cifarMaxRecords*cifarRecord+1))
	if err != nil {
		return nil, nil, err
	}
	if err := cifarSize(int64(len(raw))); err != nil {
		return nil, nil, err
	}
	n := len(raw) / cifarRecord
	x = make([]float32, n*cifarDim)
	y = make([]uint8, n)
	scale := pixelScale()
	for i := range n {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] >= 10 {
			return nil, nil, fmt.Errorf("CIFAR-10 record %d has label %d, want 0..9", i, rec[0])
		}
		y[i] = rec[0]
		dst := x[i*cifarDim : (i+1)*cifarDim]
		for j, b := range rec[1:] {
			dst[j] = scale[b]
		}
	}
	return x, y, nil
}

// cifarSize checks a batch file's length: a positive whole number of records, at most
// cifarMaxRecords of them.
func cifarSize(n int64) error {
	switch {
	case n > cifarMaxRecords*cifarRecord:
		return fmt.Errorf("CIFAR-10 batch of more than %d bytes: a batch holds at most %d records of %d bytes", cifarMaxRecords*cifarRecord, cifarMaxRecords, cifarRecord)
	case n == 0 || n%cifarRecord != 0:
		return fmt.Errorf("CIFAR-10 batch of %d bytes is not a positive multiple of the %d-byte record", n, cifarRecord)
	}
	return nil
}

// cifarDirs are the directories a CIFAR-10 place stands for: the official archive unpacks to
// cifar-10-batches-bin, so that subdirectory is accepted too.
func cifarDirs(p place) []string {
	var out []string
	for _, d := range p.dirs {
		out = append(out, d, filepath.Join(d, "cifar-10-batches-bin"))
	}
	return out
}

// loadCIFAR10 walks the same local places as the IDX sets; there is no download, because the
// official archive is a 160 MB tarball that users fetch themselves.
func (l *Loader) loadCIFAR10() (*Dataset, error) {
	d, err := l.findCIFAR10()
	if err != nil {
		return nil, err
	}
	return readCIFARDir(d)
}

// infoCIFAR10 counts the records from the files' sizes.
func (l *Loader) infoCIFAR10() (*Info, error) {
	d, err := l.findCIFAR10()
	if err != nil {
		return nil, err
	}
	count := func(files []string) (int, error) {
		n := 0
		for _, f := range files {
			path := filepath.Join(d, f)
			st, err := os.Stat(path)
			if err != nil {
				return 0, fmt.Errorf("data: cifar10: %w", err)
			}
			if err := cifarSize(st.Size()); err != nil {
				return 0, fmt.Errorf("data: cifar10: %s: %w", path, err)
			}
			n += int(st.Size() / cifarRecord)
		}
		return n, nil
	}
	train, err := count(cifarTrain)
	if err != nil {
		return nil, err
	}
	test, err := count([]string{cifarTest})
	if err != nil {
		return nil, err
	}
	return &Info{Name: "cifar10", TrainN: train, TestN: test, Dim: cifarDim, Classes: 10, Source: d}, nil
}

func (l *Loader) findCIFAR10() (string, error) {
	var tried []string
	for _, p := range l.places("cifar10") {
		if len(p.dirs) == 0 {
			tried = append(tried, p.label)
			continue
		}
		var reasons []string
		for _, d := range cifarDirs(p) {
			if cifarMissing(d) == "" {
				return d, nil
			}
			reasons = append(reasons, cifarMissing(d))
		}
		tried = append(tried, place{label: p.label, dirs: cifarDirs(p)}.describe(reasons))
	}
	tried = append(tried, "no download for cifar10: unpack cifar-10-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html and pass --data-dir")
	return "", notFound("cifar10", tried)
}

// cifarMissing says why dir does not hold the six batch files, or "" if it does.
func cifarMissing(dir string) string {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "no such directory"
	}
	var miss []string
	for _, f := range append(cifarTrain[:cifarFiles:cifarFiles], cifarTest) {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			miss = append(miss, f)
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return "missing " + strings.Join(miss, ", ")
}

func readCIFARDir(dir string) (*Dataset, error) {
	read := func(files []string, split string) (*Set, error) {
		s := &Set{Dim: cifarDim, Classes: 10, Name: "cifar10/" + split}
		for _, f := range files {
			path := filepath.Join(dir, f)
			fh, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("data: cifar10: %w", err)
			}
			// The size is checked before the file is read, so an oversized file costs nothing.
			if st, err := fh.Stat(); err != nil || cifarSize(st.Size()) != nil {
				fh.Close()
				if err == nil {
					err = cifarSize(st.Size())
				}
				return nil, fmt.Errorf("data: cifar10: %s: %w", path, err)
			}
			x, y, err := ReadCIFAR10(fh)
			fh.Close()
			if err != nil {
				return nil, fmt.Errorf("data: cifar10: %s: %w", path, err)
			}
			s.X = append(s.X, x...)
			s.Y = append(s.Y, y...)
			s.N += len(y)
		}
		return s, nil
	}
	train, err := read(cifarTrain, "train")
	if err != nil {
		return nil, err
	}
	test, err := read([]string{cifarTest}, "test")
	if err != nil {
		return nil, err
	}
	return &Dataset{Train: train, Test: test, Source: dir}, nil
}
