package data

import (
	"fmt"
)

// Set is one split of a data set held in memory: N samples of Dim features each, stored
// row-major in X as pixels/255 (values in [0, 1]), with labels in Y (0 ≤ Y[i] < Classes).
type Set struct {
	X       []float32
	Y       []uint8
	N       int
	Dim     int
	Classes int
	Name    string
}

// Dataset is a train/test pair and where it was read from (a directory, a URL, or a
// description of the generator for synthetic data).
type Dataset struct {
	Train, Test *Set
	Source      string
	// Mean is the per-channel mean that was subtracted from both splits
	// (job.Config.Normalize; ChannelMean of the training set), nil while
	// the features are the pixels/255 Load returns.
	Mean []float64
}

// Validate checks that the shapes agree and every label and pixel is in range. Loaders call it
// before returning, so a Set from this package is always consistent.
func (s *Set) Validate() error {
	if s == nil {
		return fmt.Errorf("data: nil Set")
	}
	switch {
	case s.N < 0 || s.Dim <= 0 || s.Classes <= 0:
		return fmt.Errorf("data: set %q: bad shape N=%d Dim=%d Classes=%d", s.Name, s.N, s.Dim, s.Classes)
	case s.Classes > 256:
		return fmt.Errorf("data: set %q: %d classes do not fit uint8 labels", s.Name, s.Classes)
	case len(s.X) != s.N*s.Dim:
		return fmt.Errorf("data: set %q: len(X)=%d, want N*Dim=%d", s.Name, len(s.X), s.N*s.Dim)
	case len(s.Y) != s.N:
		return fmt.Errorf("data: set %q: len(Y)=%d, want N=%d", s.Name, len(s.Y), s.N)
	}
	for i, y := range s.Y {
		if int(y) >= s.Classes {
			return fmt.Errorf("data: set %q: label %d of sample %d is not below %d classes", s.Name, y, i, s.Classes)
		}
	}
	for i, x := range s.X {
		// The negated comparison also rejects NaN.
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("data: set %q: feature %d of sample %d is %v, outside [0, 1]", s.Name, i%s.Dim, i/s.Dim, x)
		}
	}
	return nil
}

// Sample returns the features and label of sample i. The slice aliases s.X.
func (s *Set) Sample(i int) ([]float32, uint8) {
	return s.X[i*s.Dim : (i+1)*s.Dim : (i+1)*s.Dim], s.Y[i]
}

// Subset returns the first n samples (all of them if n ≥ N, none if n ≤ 0) for quick runs. The
// result shares memory with s: the data sets here are read-only once loaded.
func (s *Set) Subset(n int) *Set {
	n = max(0, min(n, s.N))
	return &Set{
		X:       s.X[: n*s.Dim : n*s.Dim],
		Y:       s.Y[:n:n],
		N:       n,
		Dim:     s.Dim,
		Classes: s.Classes,
		Name:    s.Name,
	}
}

// Histogram counts the samples of each class.
func (s *Set) Histogram() []int {
	h := make([]int, s.Classes)
	for _, y := range s.Y {
		if int(y) < len(h) {
			h[y]++
		}
	}
	return h
}

// Shard returns the indices of the samples that worker (0-based) of workers owns: every
// workers-th sample starting at worker. Striding rather than cutting contiguous blocks keeps
// the shard sizes within one of each other and, for a data set stored in an arbitrary class
// order, keeps each shard's class mix close to the whole set's.
func (s *Set) Shard(worker, workers int) ([]int, error) {
	if workers <= 0 {
		return nil, fmt.Errorf("data: Shard: workers=%d, must be ≥ 1", workers)
	}
	if worker < 0 || worker >= workers {
		return nil, fmt.Errorf("data: Shard: worker=%d, must be in [0, %d)", worker, workers)
	}
	if s.N < workers {
		return nil, fmt.Errorf("data: Shard: set %q has %d samples, fewer than %d workers", s.Name, s.N, workers)
	}
	idx := make([]int, 0, (s.N-worker+workers-1)/workers)
	for i := worker; i < s.N; i += workers {
		idx = append(idx, i)
	}
	return idx, nil
}
