package ckpt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadMeta reads the header of the checkpoint at path, not its values,
// and checks it against the file's size: the header's range must be
// exactly the bytes that follow it (the values are verified, with the
// checksum, by Read). So a header can be trusted for what it costs to
// read the file before anything is allocated for it.
func ReadMeta(path string) (Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, fmt.Errorf("ckpt: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Meta{}, fmt.Errorf("ckpt: %w", err)
	}
	size := st.Size()
	var pre [12]byte
	if _, err := io.ReadFull(f, pre[:]); err != nil || [8]byte(pre[:8]) != magic {
		return Meta{}, fmt.Errorf("%w: %s: not a pacer checkpoint (bad magic)", ErrCorrupt, path)
	}
	hl := int64(binary.LittleEndian.Uint32(pre[8:]))
	if hl > maxHeader || 16+hl > size {
		return Meta{}, fmt.Errorf("%w: %s: header of %d bytes in a file of %d", ErrCorrupt, path, hl, size)
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	var m Meta
	if err := json.Unmarshal(hdr, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, path, err)
	}
	if !bodyFits(size-16-hl, &m) {
		return Meta{}, fmt.Errorf("%w: %s: a file of %d bytes does not hold the header's range [%d, %d) of %d parameters",
			ErrCorrupt, path, size, m.Lo, m.Hi, m.NumParams)
	}
	return m, nil
}

// Job is a whole job's model as its shards' checkpoints hold it.
type Job struct {
	Model   string
	Weights []float32 // the full parameter vector, every shard's block in place
	Shards  []Meta    // each shard's header (its version, range)
	// EMA is the weights' moving average (--ema) put together the same
	// way; nil unless every shard's file holds its block.
	EMA []float32
}

// ReadJob reads every shard's checkpoint in dir (shard-0.ckpt names the
// job's shard count, model and parameter count) and puts their blocks
// together. Every file must be a checkpoint of the same job, and their
// ranges must tile the vector; each is verified as Read verifies one.
// Every header is read and checked against its file's size before the
// vector is allocated.
func ReadJob(dir string) (*Job, error) { return ReadJobChecked(dir, nil) }

// ReadJobChecked is ReadJob with check (if not nil) given the headers,
// once each is checked against its file, to compare with what the caller
// expects (a model's parameter count, a section): only if it returns nil
// is the vector allocated and the values read.
func ReadJobChecked(dir string, check func(shards []Meta) error) (*Job, error) {
	m0, err := ReadMeta(Path(dir, 0))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("ckpt: no checkpoint of shard 0 in %s (want shard-0.ckpt … shard-N.ckpt, as the servers' --checkpoint-dir holds them)", dir)
		}
		return nil, err
	}
	if m0.Shards < 1 || m0.NumParams < 1 || m0.NumParams > 1<<31 {
		return nil, fmt.Errorf("%w: %s: %d shards of %d parameters", ErrCorrupt, Path(dir, 0), m0.Shards, m0.NumParams)
	}
	var metas []Meta
	next, ema := 0, true
	for i := 0; i < m0.Shards; i++ {
		path := Path(dir, i)
		m := m0
		if i > 0 {
			if m, err = ReadMeta(path); err != nil {
				return nil, fmt.Errorf("ckpt: the job has %d shards: %w", m0.Shards, err)
			}
		}
		if m.Lo != next || m.Hi > m0.NumParams {
			return nil, fmt.Errorf("%w: %s holds [%d, %d) of %d parameters; the shards before it end at %d", ErrMismatch, path, m.Lo, m.Hi, m0.NumParams, next)
		}
		if err := m.check(Want{Shard: i, Shards: m0.Shards, Lo: m.Lo, Hi: m.Hi, NumParams: m0.NumParams, Model: m0.Model}); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		metas = append(metas, m)
		next, ema = m.Hi, ema && m.EMA
	}
	if next != m0.NumParams {
		return nil, fmt.Errorf("%w: the shards hold [0, %d) of %d parameters", ErrMismatch, next, m0.NumParams)
	}
	if check != nil {
		if err := check(metas); err != nil {
			return nil, err
		}
	}
	j := &Job{Model: m0.Model, Weights: make([]float32, m0.NumParams)}
	if ema {
		j.EMA = make([]float32, m0.NumParams)
	}
	for i, m := range metas {
		st, err := Read(Path(dir, i), Want{Shard: i, Shards: m0.Shards, Lo: m.Lo, Hi: m.Hi, NumParams: m0.NumParams, Model: m0.Model})
		if err != nil {
			return nil, err
		}
		copy(j.Weights[st.Lo:st.Hi], st.Weights)
		if st.EMA == nil {
			j.EMA = nil
		} else if j.EMA != nil {
			copy(j.EMA[st.Lo:st.Hi], st.EMA)
		}
		j.Shards = append(j.Shards, st.Meta)
	}
	return j, nil
}
