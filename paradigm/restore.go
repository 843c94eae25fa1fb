package paradigm

// This file: Aggregator.Reset for every aggregator. A live shard restarts
// its aggregator at a known version after a restore from a checkpoint, or
// when a restored shard learns from the workers that it had reached a later
// version before it died.

func (r *round) Reset(v uint64, dropped []uint64) []uint64 {
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

func (a *pspAgg) Reset(v uint64, dropped []uint64) []uint64 {
	a.armed = false
	return a.round.Reset(v, dropped)
}

func (a *softsyncAgg) Reset(v uint64, dropped []uint64) []uint64 {
	for _, c := range a.buf {
		dropped = append(dropped, c.ID)
	}
	a.buf = a.buf[:0]
	a.v = v
	return dropped
}

func (a *asyncAgg) Reset(v uint64, dropped []uint64) []uint64 {
	a.v = v
	return dropped
}

func (a *superstepAgg) Reset(v uint64, dropped []uint64) []uint64 {
	for _, c := range a.buf {
		dropped = append(dropped, c.ID)
	}
	a.dropped += int64(len(a.buf))
	a.buf = a.buf[:0]
	a.v = v
	return dropped
}
