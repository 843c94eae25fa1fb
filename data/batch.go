package data

import (
	"fmt"
	"math/rand/v2"
)

// BatcherConfig selects a worker's shard and how it is cut into mini-batches.
type BatcherConfig struct {
	Worker, Workers int    // this worker (0-based) of Workers; the shard is Set.Shard(Worker, Workers)
	Batch           int    // samples per mini-batch, ≥ 1
	Seed            uint64 // with Worker and the epoch number, determines each epoch's order
	// DropLast skips an epoch's final short batch, so every batch has exactly Batch samples.
	DropLast bool
	// Global draws from the whole set instead of the worker's shard: each worker passes through
	// its own permutation of every sample (the backup-workers and staleness-aware papers' sampling),
	// so no sample belongs to one worker alone.
	Global bool
}

// Batch is one mini-batch. X and Y alias the Batcher's buffers and are overwritten by the next
// call to Next.
type Batch struct {
	X     []float32 // N×Dim features, row-major
	Y     []uint8   // N labels
	N     int
	Epoch int // 0-based epoch the batch belongs to
	Index int // 0-based position of the batch within its epoch
	// Indices are the N samples' indices in the Set, aliasing the Batcher's order (valid until
	// the next call to Next).
	Indices []int
}

// Batcher yields one worker's mini-batches epoch after epoch. Each epoch's order is a fresh
// permutation of the shard drawn from (Seed, Worker, epoch) alone, so a worker restarted at an
// epoch (Seek) sees the same batches it would have seen without the restart.
type Batcher struct {
	set   *Set
	cfg   BatcherConfig
	shard []int // the owned sample indices in ascending order
	order []int // the current epoch's permutation of shard
	pcg   *rand.PCG
	rng   *rand.Rand
	epoch int
	next  int // index into order of the next batch's first sample
	x     []float32
	y     []uint8
}

// NewBatcher prepares the batches of cfg.Worker's shard of s.
func NewBatcher(s *Set, cfg BatcherConfig) (*Batcher, error) {
	if s == nil {
		return nil, fmt.Errorf("data: NewBatcher: nil Set")
	}
	if cfg.Batch < 1 {
		return nil, fmt.Errorf("data: BatcherConfig.Batch = %d, must be ≥ 1", cfg.Batch)
	}
	shard, err := s.Shard(cfg.Worker, cfg.Workers)
	if err != nil {
		return nil, err
	}
	if cfg.Global {
		shard = make([]int, s.N)
		for i := range shard {
			shard[i] = i
		}
	}
	if cfg.DropLast && len(shard) < cfg.Batch {
		return nil, fmt.Errorf("data: BatcherConfig.Batch = %d exceeds worker %d's shard of %d samples with DropLast set",
			cfg.Batch, cfg.Worker, len(shard))
	}
	pcg := rand.NewPCG(0, 0)
	b := &Batcher{
		set:   s,
		cfg:   cfg,
		shard: shard,
		order: make([]int, len(shard)),
		pcg:   pcg,
		rng:   rand.New(pcg),
		x:     make([]float32, cfg.Batch*s.Dim),
		y:     make([]uint8, cfg.Batch),
	}
	b.Seek(0)
	return b, nil
}

// BatchesPerEpoch is the number of batches Next yields per epoch.
func (b *Batcher) BatchesPerEpoch() int {
	if b.cfg.DropLast {
		return len(b.shard) / b.cfg.Batch
	}
	return (len(b.shard) + b.cfg.Batch - 1) / b.cfg.Batch
}

// ShardSize is the number of samples this worker owns (with Global, the whole set's).
func (b *Batcher) ShardSize() int { return len(b.shard) }

// Seek positions the Batcher at the start of epoch (≥ 0; a negative epoch counts as 0).
func (b *Batcher) Seek(epoch int) {
	b.epoch = max(0, epoch)
	b.next = 0
	copy(b.order, b.shard)
	// The worker goes into the PCG's first word through a 64-bit mix so that nearby seeds and
	// workers do not give correlated streams; the epoch is the second word. PyTorch workers
	// draw this same order (python/pacer/batches.py); TestBatchOrderFixture fails on any change
	// to it until python/testdata/batches.json is rewritten, and the Python tests with it.
	b.pcg.Seed(mix64(b.cfg.Seed^mix64(uint64(b.cfg.Worker)+1)), uint64(b.epoch))
	b.rng.Shuffle(len(b.order), func(i, j int) { b.order[i], b.order[j] = b.order[j], b.order[i] })
}

// Next copies the next mini-batch into the reusable buffers and returns it; after the last batch
// of an epoch it moves on to the next epoch. It does not allocate.
func (b *Batcher) Next() Batch {
	n := min(b.cfg.Batch, len(b.order)-b.next)
	if n == 0 || (b.cfg.DropLast && n < b.cfg.Batch) {
		b.Seek(b.epoch + 1)
		n = min(b.cfg.Batch, len(b.order))
	}
	dim := b.set.Dim
	for k, idx := range b.order[b.next : b.next+n] {
		copy(b.x[k*dim:(k+1)*dim], b.set.X[idx*dim:(idx+1)*dim])
		b.y[k] = b.set.Y[idx]
	}
	batch := Batch{X: b.x[:n*dim], Y: b.y[:n], N: n, Epoch: b.epoch, Index: b.next / b.cfg.Batch, Indices: b.order[b.next : b.next+n]}
	b.next += n
	return batch
}

// mix64 is the SplitMix64 finaliser: a bijection that spreads every input bit over the output.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
