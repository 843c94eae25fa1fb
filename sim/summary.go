package sim

import (
	"github.com/pacer-ps/pacer/runstats"
)

func (e *engine) summary() *runstats.Run {
	k := len(e.ws)
	end := e.now
	r := &runstats.Run{
		Paradigm: e.cfg.Spec.String(), Mode: runstats.Sim, Workers: k, Shards: len(e.ss), Seed: e.cfg.Seed,
		Pushes: e.pushes, Updates: e.updates, Dropped: e.dropped, Withheld: e.unsent,
		Seconds: end.Seconds(), VirtualSeconds: end.Seconds(),
		WorkerWait: make([]float64, k), WorkerPushes: make([]int64, k),
	}
	st := e.pol.Gate.Stats()
	r.Releases, r.MaxGap, r.ControllerCalls = st.Releases+e.auto.gates.Releases, max(st.MaxGap, e.auto.gates.MaxGap), st.ControllerCalls+e.auto.gates.ControllerCalls
	r.Decisions = e.auto.decisions
	r.ControllerSeconds = e.ctrl.Seconds()
	r.SearchSeconds = e.search.Seconds()
	if end > 0 {
		r.Throughput = float64(e.pushes) / end.Seconds()
	}
	var waitSum float64
	for p := range e.ws {
		w := &e.ws[p]
		life, wait := end, w.wait
		if w.dead {
			life = w.diedAt
		} else if !w.computing {
			wait += end - w.waitFrom
		}
		if life > 0 {
			r.WorkerWait[p] = wait.Seconds() / life.Seconds()
		}
		waitSum += r.WorkerWait[p]
		r.WorkerPushes[p] = w.pushes
	}
	r.WaitFraction = waitSum / float64(k)
	if e.net != nil {
		r.TimeSplit = e.timeSplit()
		r.Network = e.cfg.Network.String()
		r.ShardLinkIn, r.ShardLinkOut = make([]float64, len(e.ss)), make([]float64, len(e.ss))
		for i := range e.ss {
			if l := e.net.Shard(i); end > 0 {
				// Transfers reserved before the end may run past it.
				r.ShardLinkIn[i] = min(1, l.BusyIn.Seconds()/end.Seconds())
				r.ShardLinkOut[i] = min(1, l.BusyOut.Seconds()/end.Seconds())
			}
		}
	}
	r.StalenessHist, r.ShardStaleness = mergeHist(e.ss)
	r.StalenessMean, r.StalenessMax = histStats(r.StalenessHist)
	return r
}

func mergeHist(ss []shard) ([]int64, [][]int64) {
	var all []int64
	per := make([][]int64, len(ss))
	for i, s := range ss {
		per[i] = append([]int64{}, s.stale...)
		for v, n := range s.stale {
			for len(all) <= v {
				all = append(all, 0)
			}
			all[v] += n
		}
	}
	return all, per
}

func histStats(h []int64) (mean float64, maxV int64) {
	var n, sum int64
	for v, c := range h {
		n += c
		sum += int64(v) * c
		if c > 0 {
			maxV = int64(v)
		}
	}
	if n > 0 {
		mean = float64(sum) / float64(n)
	}
	return mean, maxV
}

// timeSplit averages the workers' phases (each worker's closed phases as
// shares of their sum; a worker that never closed one is left out).
func (e *engine) timeSplit() *runstats.TimeSplit {
	var ts runstats.TimeSplit
	n := 0
	for p := range e.ws {
		ph := &e.ws[p].phase
		total := ph[phCompute] + ph[phPush] + ph[phGate] + ph[phPull]
		if total <= 0 {
			continue
		}
		n++
		srv := min(ph[phServer], ph[phPull])
		t := total.Seconds()
		ts.Compute += ph[phCompute].Seconds() / t
		ts.Push += ph[phPush].Seconds() / t
		ts.Gate += ph[phGate].Seconds() / t
		ts.Pull += (ph[phPull] - srv).Seconds() / t
		ts.Server += srv.Seconds() / t
	}
	if n > 0 {
		for _, v := range []*float64{&ts.Compute, &ts.Push, &ts.Gate, &ts.Pull, &ts.Server} {
			*v /= float64(n)
		}
	}
	return &ts
}
