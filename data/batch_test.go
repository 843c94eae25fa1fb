package data

import (
	"slices"
	"strings"
	"testing"
)

// indexedSet has one feature per sample equal to its index/N, so a batch row names its sample.
func indexedSet(n int) *Set {
	s := &Set{X: make([]float32, 2*n), Y: make([]uint8, n), N: n, Dim: 2, Classes: 10, Name: "indexed"}
	for i := range n {
		s.X[2*i] = float32(i) / float32(n)
		s.X[2*i+1] = 1
		s.Y[i] = uint8(i % 10)
	}
	return s
}

func sampleOf(s *Set, row []float32) int {
	return int(row[0]*float32(s.N) + 0.5)
}

func TestShardPartitions(t *testing.T) {
	s := indexedSet(103)
	for _, workers := range []int{1, 2, 5, 103} {
		seen := make([]int, s.N)
		for w := range workers {
			idx, err := s.Shard(w, workers)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(idx); n < s.N/workers || n > s.N/workers+1 {
				t.Errorf("workers=%d: shard %d has %d samples", workers, w, n)
			}
			for _, i := range idx {
				seen[i]++
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("workers=%d: sample %d in %d shards", workers, i, c)
			}
		}
	}
	for _, c := range [][2]int{{0, 0}, {-1, 2}, {2, 2}, {0, 104}} {
		if _, err := s.Shard(c[0], c[1]); err == nil {
			t.Errorf("Shard(%d, %d) accepted", c[0], c[1])
		}
	}
}

// epochSamples drains one epoch and returns the sample indices in order.
func epochSamples(t *testing.T, b *Batcher, s *Set, wantEpoch int) []int {
	var out []int
	for k := range b.BatchesPerEpoch() {
		bt := b.Next()
		if bt.Epoch != wantEpoch || bt.Index != k {
			t.Fatalf("batch %d: epoch %d index %d, want %d %d", k, bt.Epoch, bt.Index, wantEpoch, k)
		}
		for r := range bt.N {
			i := sampleOf(s, bt.X[r*s.Dim:(r+1)*s.Dim])
			if bt.Y[r] != s.Y[i] {
				t.Fatalf("label %d with sample %d, want %d", bt.Y[r], i, s.Y[i])
			}
			out = append(out, i)
		}
	}
	return out
}

func TestBatcherEpochsAreReproduciblePermutations(t *testing.T) {
	s := indexedSet(101)
	cfg := BatcherConfig{Worker: 1, Workers: 3, Batch: 8, Seed: 7}
	b, err := NewBatcher(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	shard, _ := s.Shard(1, 3)
	e0 := epochSamples(t, b, s, 0)
	e1 := epochSamples(t, b, s, 1)
	if slices.Equal(e0, e1) || slices.Equal(e0, shard) {
		t.Fatal("epochs not reshuffled")
	}
	for _, e := range [][]int{e0, e1} {
		sorted := slices.Sorted(slices.Values(e))
		if !slices.Equal(sorted, shard) {
			t.Fatalf("epoch is not a permutation of the shard: %v", sorted)
		}
	}
	// A fresh Batcher with the same config, and a Seek back, repeat the same order.
	b2, _ := NewBatcher(s, cfg)
	if !slices.Equal(epochSamples(t, b2, s, 0), e0) {
		t.Fatal("same config, different epoch 0")
	}
	b2.Seek(1)
	if !slices.Equal(epochSamples(t, b2, s, 1), e1) {
		t.Fatal("Seek(1) differs from the uninterrupted epoch 1")
	}
	// Another seed or another worker gives another order.
	cfg.Seed = 8
	b3, _ := NewBatcher(s, cfg)
	if slices.Equal(epochSamples(t, b3, s, 0), e0) {
		t.Fatal("different seed, same order")
	}
}

func TestBatcherLastBatch(t *testing.T) {
	s := indexedSet(20)
	b, _ := NewBatcher(s, BatcherConfig{Workers: 1, Batch: 6, Seed: 1})
	var sizes []int
	for range 5 {
		sizes = append(sizes, b.Next().N)
	}
	if !slices.Equal(sizes, []int{6, 6, 6, 2, 6}) || b.BatchesPerEpoch() != 4 {
		t.Fatalf("sizes %v, batches/epoch %d", sizes, b.BatchesPerEpoch())
	}
	b, _ = NewBatcher(s, BatcherConfig{Workers: 1, Batch: 6, Seed: 1, DropLast: true})
	for k := range 7 {
		bt := b.Next()
		if bt.N != 6 || len(bt.X) != 12 || bt.Epoch != k/3 {
			t.Fatalf("DropLast batch %d: N=%d epoch %d", k, bt.N, bt.Epoch)
		}
	}
}

func TestBatcherNoAllocation(t *testing.T) {
	s := indexedSet(1000)
	b, _ := NewBatcher(s, BatcherConfig{Worker: 0, Workers: 2, Batch: 32, Seed: 3})
	// 200 calls span several epochs, so reshuffling is covered too.
	if n := testing.AllocsPerRun(200, func() { b.Next() }); n != 0 {
		t.Fatalf("Next allocates %v times per call", n)
	}
	// AllocsPerRun rounds down, so the once-per-epoch reshuffle is checked on its own.
	if n := testing.AllocsPerRun(20, func() { b.Seek(3) }); n != 0 {
		t.Fatalf("reshuffling allocates %v times per epoch", n)
	}
}

func TestBatcherBadConfig(t *testing.T) {
	s := indexedSet(10)
	for want, cfg := range map[string]BatcherConfig{
		"Batch = 0":  {Workers: 1},
		"workers=0":  {Batch: 1},
		"worker=3":   {Worker: 3, Workers: 2, Batch: 1},
		"DropLast":   {Workers: 2, Batch: 6, DropLast: true},
		"fewer than": {Workers: 11, Batch: 1},
	} {
		if _, err := NewBatcher(s, cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %+v: error %v lacks %q", cfg, err, want)
		}
	}
	if _, err := NewBatcher(nil, BatcherConfig{Workers: 1, Batch: 1}); err == nil {
		t.Error("nil set accepted")
	}
}

func TestSubset(t *testing.T) {
	s := indexedSet(10)
	if sub := s.Subset(4); sub.N != 4 || len(sub.X) != 8 || len(sub.Y) != 4 || sub.Validate() != nil {
		t.Fatalf("Subset(4): %+v", sub)
	}
	if s.Subset(50).N != 10 || s.Subset(-1).N != 0 {
		t.Fatal("Subset does not clamp")
	}
}

// Global sampling: each worker passes through its own permutation of the
// whole set, and a batch's Indices name its samples.
func TestBatcherGlobal(t *testing.T) {
	s := indexedSet(50)
	var orders [][]int
	for w := range 2 {
		b, err := NewBatcher(s, BatcherConfig{Worker: w, Workers: 2, Batch: 7, Seed: 3, Global: true})
		if err != nil {
			t.Fatal(err)
		}
		if b.ShardSize() != 50 || b.BatchesPerEpoch() != 8 {
			t.Fatalf("worker %d: shard %d, %d batches an epoch: want the whole set's 50, 8", w, b.ShardSize(), b.BatchesPerEpoch())
		}
		var seen []int
		for range b.BatchesPerEpoch() {
			bt := b.Next()
			for k, idx := range bt.Indices {
				if got := sampleOf(s, bt.X[k*2:k*2+2]); got != idx {
					t.Fatalf("row %d holds sample %d, Indices says %d", k, got, idx)
				}
			}
			seen = append(seen, bt.Indices...)
		}
		if sorted := slices.Sorted(slices.Values(seen)); len(sorted) != 50 || sorted[0] != 0 || sorted[49] != 49 || len(slices.Compact(sorted)) != 50 {
			t.Fatalf("worker %d's epoch is not a permutation of the whole set: %v", w, sorted)
		}
		orders = append(orders, seen)
	}
	if slices.Equal(orders[0], orders[1]) {
		t.Error("two workers drew the same order")
	}
}
