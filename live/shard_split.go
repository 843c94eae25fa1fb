package live

import (
	"runtime"
	"sync"

	"github.com/pacer-ps/pacer/optim"
)

// This file: the apply split across cores by range.
//
// The update is element-wise (each weight, and its velocity, depends on
// that element of each gradient only), so parts of the block can be
// stepped at once by different cores and give the same bits as one pass,
// whatever the split: determinism does not depend on the core count. A
// part is at least minSplit floats, so small blocks (and the tests' tiny
// models) stay on one goroutine.

const minSplit = 1 << 18 // 1 MB of weights a part

// applyPart is one range of the split apply; run is made once, so that
// starting it with a go statement allocates nothing.
type applyPart struct {
	opt    *optim.Optimizer
	lo, hi int
	gs     [][]float32
	run    func()
	undo   optim.Undo
	ok     bool
}

// splitApply is the shard's apply split across cores: parts are made for
// the number of cores in use and kept until that number changes.
type splitApply struct {
	parts []applyPart
	wg    sync.WaitGroup
	w     []float32
	ws    []float32
	lr    float32
	undo  optim.Undo // the one-part apply's
	kept  bool       // the apply writes into a copy (applyWeighted)
	// fast: the apply cannot overflow (optim.Undo.Fast); small: every
	// weight and state value is below 2⁴⁰ (the last apply said so);
	// large: the buffered gradients holding a value of 2⁴⁰ or more.
	fast, small bool
	large       map[uint64]bool
}

// applyWeighted is opt.ApplyWeightedChecked(w, gs, ws, lr) over
// GOMAXPROCS ranges at once (the caller's goroutine takes the first):
// false when a result was NaN or ±Inf, and then nothing changed.
// With s.split.kept, the block as it was before the apply stays in
// another snapshot (copy on write): only the optimizer's state is saved.
func (s *Shard) applyWeighted(w []float32, gs [][]float32, ws []float32, lr float32) bool {
	kept, fast := s.split.kept, s.split.fast
	p := min(runtime.GOMAXPROCS(0), len(w)/minSplit)
	if p <= 1 {
		un := &s.split.undo
		un.KeptW, un.Fast = kept, fast
		ok := s.opt.ApplyWeightedChecked(w, gs, ws, lr, un)
		if ok {
			s.split.small = un.Small
		}
		return ok
	}
	sp := &s.split
	s.opt.Tick() // Adam's step count: once for the whole block, not once a part
	if len(sp.parts) != p {
		sp.parts = make([]applyPart, p)
		for i := range sp.parts {
			pt := &sp.parts[i]
			pt.lo, pt.hi = i*len(w)/p, (i+1)*len(w)/p
			o, err := s.opt.Sub(pt.lo, pt.hi)
			if err != nil {
				panic(err) // the ranges lie inside the block by construction
			}
			pt.opt = o
			pt.run = func() { sp.step(pt); sp.wg.Done() }
		}
	}
	sp.w, sp.ws, sp.lr = w, ws, lr
	for i := range sp.parts {
		pt := &sp.parts[i]
		pt.undo.KeptW, pt.undo.Fast = kept, fast
		pt.gs = pt.gs[:0]
		for _, g := range gs {
			pt.gs = append(pt.gs, g[pt.lo:pt.hi])
		}
	}
	sp.wg.Add(p - 1)
	for i := 1; i < p; i++ {
		go sp.parts[i].run()
	}
	sp.step(&sp.parts[0])
	sp.wg.Wait()
	ok, small := true, true
	for i := range sp.parts {
		ok, small = ok && sp.parts[i].ok, small && sp.parts[i].undo.Small
	}
	if ok {
		sp.small = small
	}
	if !ok {
		// A part that failed put its range back; the others do now.
		for i := range sp.parts {
			if pt := &sp.parts[i]; pt.ok {
				pt.opt.Revert(w[pt.lo:pt.hi], &pt.undo)
			}
		}
		s.opt.Untick()
	}
	sp.w, sp.ws = nil, nil
	for i := range sp.parts {
		clear(sp.parts[i].gs)
	}
	return ok
}

func (sp *splitApply) step(pt *applyPart) {
	pt.ok = pt.opt.ApplyWeightedChecked(sp.w[pt.lo:pt.hi], pt.gs, sp.ws, sp.lr, &pt.undo)
}
