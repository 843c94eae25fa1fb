package ckpt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadMeta reads the header of the checkpoint at path, not its values
// (they are verified, with the checksum, by Read).
func ReadMeta(path string) (Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, fmt.Errorf("ckpt: %w", err)
	}
	defer f.Close()
	var pre [12]byte
	if _, err := io.ReadFull(f, pre[:]); err != nil || [8]byte(pre[:8]) != magic {
		return Meta{}, fmt.Errorf("%w: %s: not a pacer checkpoint (bad magic)", ErrCorrupt, path)
	}
	hl := binary.LittleEndian.Uint32(pre[8:])
	if hl > maxHeader {
		return Meta{}, fmt.Errorf("%w: %s: header of %d bytes", ErrCorrupt, path, hl)
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	var m Meta
	if err := json.Unmarshal(hdr, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, path, err)
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
func ReadJob(dir string) (*Job, error) {
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
	j := &Job{Model: m0.Model, Weights: make([]float32, m0.NumParams), EMA: make([]float32, m0.NumParams)}
	next := 0
	for i := 0; i < m0.Shards; i++ {
		path := Path(dir, i)
		m, err := ReadMeta(path)
		if err != nil {
			return nil, fmt.Errorf("ckpt: the job has %d shards: %w", m0.Shards, err)
		}
		if m.Lo != next {
			return nil, fmt.Errorf("%w: %s holds [%d, %d); the shards before it end at %d", ErrMismatch, path, m.Lo, m.Hi, next)
		}
		st, err := Read(path, Want{Shard: i, Shards: m0.Shards, Lo: m.Lo, Hi: m.Hi, NumParams: m0.NumParams, Model: m0.Model})
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
		next = st.Hi
	}
	if next != m0.NumParams {
		return nil, fmt.Errorf("%w: the shards hold [0, %d) of %d parameters", ErrMismatch, next, m0.NumParams)
	}
	return j, nil
}
