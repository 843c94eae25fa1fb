package paradigm

// This file lets a live driver restart a shard's aggregator at a known
// version: after a restore from a checkpoint, or when a restored shard learns
// from the workers that it had reached a later version before it died.

// resetter is implemented by every aggregator of this package.
type resetter interface {
	reset(v uint64, dropped []uint64) []uint64
}

// ResetShard makes shard i's aggregator continue at version v with an empty
// buffer, keeping its membership. The IDs of buffered gradients it discards
// are appended to dropped and returned (the driver frees their data; they
// count as dropped). It is not an apply: no weights change.
func (pol *Policy) ResetShard(i int, v uint64, dropped []uint64) []uint64 {
	r, ok := pol.Aggs[i].(resetter)
	if !ok {
		panic("paradigm: ResetShard on an aggregator without reset")
	}
	return r.reset(v, dropped)
}

func (r *round) reset(v uint64, dropped []uint64) []uint64 {
	for _, c := range r.buf {
		dropped = append(dropped, c.ID)
	}
	r.dropped += int64(len(r.buf))
	r.buf = r.buf[:0]
	for i := range r.have {
		r.have[i] = false
	}
	r.missing = r.nLive
	r.v = v
	return dropped
}

func (a *pspAgg) reset(v uint64, dropped []uint64) []uint64 {
	a.armed = false
	return a.round.reset(v, dropped)
}

func (a *softsyncAgg) reset(v uint64, dropped []uint64) []uint64 {
	for _, c := range a.buf {
		dropped = append(dropped, c.ID)
	}
	a.buf = a.buf[:0]
	a.v = v
	return dropped
}

func (a *asyncAgg) reset(v uint64, dropped []uint64) []uint64 {
	a.v = v
	return dropped
}

func (a *superstepAgg) reset(v uint64, dropped []uint64) []uint64 {
	for _, c := range a.buf {
		dropped = append(dropped, c.ID)
	}
	a.dropped += int64(len(a.buf))
	a.buf = a.buf[:0]
	a.v = v
	return dropped
}
