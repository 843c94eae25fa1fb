package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/record"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// driver is Train's observer: it watches the coordinator's counters,
// evaluates the shards' weights on the test set, fires the faults and
// writes the summary. It connects like any tool would, as an observer.
type driver struct {
	params   *job.Description
	opt      *Options
	ds       *data.Dataset
	cl       cluster
	progress func(runstats.Progress)

	obs   []*proto.Observer
	model nn.Model
	w     []float32
	ev    proto.Evaluations

	mu     sync.Mutex
	faults []FaultRecord
	fwg    sync.WaitGroup
	// fail ends the job with its cause: a process that exited on its own
	// (the cluster's failed) or a restart that went wrong. It cancels the
	// context every wait of the job runs under, so whatever call the
	// driver is in (a stats call whose observer redials a shard that is
	// gone) returns at once, rather than wait for a shard that will not
	// come back.
	fail context.CancelCauseFunc
	last proto.CoordStats // the coordinator's latest counters (for errors)
	// removed is the coordinator's count of removals as last polled: a
	// restart with AfterRemoval waits for it to pass its count at the kill.
	removed atomic.Int64
	done    atomic.Bool
	// polled is closed (and replaced, under mu) each time the watch loop
	// has read the coordinator's counters: what awaitRemoval waits on.
	polled chan struct{}
}

func (d *driver) run(ctx context.Context) (*Result, error) {
	// The job's waits run under running: ctx's end is an interruption,
	// running's own end (fail) a failure, with its cause.
	running, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	d.fail, d.polled = fail, make(chan struct{})
	if err := d.cl.start(running); err != nil {
		d.cl.stop()
		return nil, err
	}
	go func() {
		select {
		case err := <-d.cl.failed():
			fail(err)
		case <-running.Done():
		}
	}()
	res, err := d.watch(running)
	d.fwg.Wait()
	if err != nil && ctx.Err() == nil && running.Err() != nil {
		// The job failed: its cause is the error, not what the call it
		// cut short returned ("context canceled").
		err = context.Cause(running)
		if cs := d.last; cs.Target > 0 {
			err = fmt.Errorf("%w (the job stopped after %d of %d pushes)", err, cs.Pushes, cs.Target)
		}
	}
	if err != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C, SIGTERM, the timeout): what was measured
		// so far is kept, marked as such, beside the error.
		res = d.interrupted()
	}
	if err != nil && ctx.Err() != nil {
		// Say where the job stood: a bare "deadline exceeded" does not
		// tell a hang from a slow machine.
		// The context's error is the cause whatever the interrupted call
		// returned (a socket cut off by the same deadline says only
		// "i/o timeout").
		cs := d.last
		cause := ctx.Err()
		if !errors.Is(err, cause) {
			cause = fmt.Errorf("%w (%v)", cause, err)
		} else {
			cause = err
		}
		err = fmt.Errorf("launch: job stopped after %d of %d pushes (%d workers live, %d removed; faults %+v): %w",
			cs.Pushes, cs.Target, cs.Live, cs.Removed, d.faults, cause)
	}
	for _, c := range d.obs {
		if c != nil {
			c.Close()
		}
	}
	if serr := d.cl.stop(); serr != nil && err == nil {
		err = serr
	}
	if err != nil && res != nil && ctx.Err() != nil {
		res.Faults = d.faults
		return res, fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	if err != nil {
		return nil, err
	}
	res.Faults = d.faults
	return res, nil
}

// ErrInterrupted says a job was stopped before it finished (its context
// ended: Ctrl-C, SIGTERM, Options.Timeout). TrainResult then returns what
// was measured so far with it, the run marked Interrupted.
var ErrInterrupted = errors.New("launch: interrupted")

// interrupted stops the job and builds the summary of what was measured:
// the curve so far and, when the shards still answer, one last evaluation
// of the weights where the job stopped. nil when not even that can be had
// (the job never started, the shards are gone).
func (d *driver) interrupted() *Result {
	if d.model == nil || len(d.obs) == 0 {
		return nil
	}
	// The job's context is gone: these calls get their own, bounded.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	d.abort(ctx, nil)
	cs := d.last
	if st, err := d.stats(ctx, 0); err == nil && st.Coord != nil {
		cs = *st.Coord
		d.observed(cs)
	}
	if acc, err := d.evaluate(ctx, cs); err == nil {
		d.report(cs, acc)
	}
	res, err := d.summarize(ctx, cs)
	if err != nil {
		return nil
	}
	res.Run.Interrupted = true
	return res
}

// observer is shard i's observer connection (made on first use; it
// redials while the shard is away, which it may be while restarting).
func (d *driver) observer(i int) *proto.Observer {
	if d.obs[i] == nil {
		d.obs[i] = proto.NewObserver(d.cl.transport(), d.cl.addrs()[i], i, d.opt.Token, d.opt.ControlToken)
	}
	return d.obs[i]
}

func (d *driver) stats(ctx context.Context, i int) (proto.Stats, error) {
	return d.observer(i).Stats(ctx)
}

// evaluate pulls every shard's block (of the moving average under --ema)
// and measures test accuracy as of the coordinator's counters cs.
func (d *driver) evaluate(ctx context.Context, cs proto.CoordStats) (float64, error) {
	for i, r := range d.ranges() {
		if err := d.observer(i).Evaluated(ctx, d.params.Job.Averaged(), d.w[r[0]:r[1]]); err != nil {
			return 0, err
		}
	}
	return record.Evaluate(&d.ev, d.params, d.model, d.w, d.ds.Test, cs), nil
}

func (d *driver) ranges() [][2]int { return job.Ranges(d.model.NumParams(), d.params.Job.Shards) }

func (d *driver) watch(ctx context.Context) (*Result, error) {
	j := &d.params.Job
	var err error
	if d.model, err = job.NewModel(*j); err != nil {
		return nil, err
	}
	d.w = make([]float32, d.model.NumParams())
	d.obs = make([]*proto.Observer, j.Shards)
	evalStep := max(1, int64(j.EvalEvery*float64(d.params.TrainN)/float64(j.Batch)))
	nextEval := evalStep
	fired := make([]bool, len(d.opt.Faults))
	// The coordinator tells an observer nothing unasked, so its counters
	// are read every Poll; everything else ends the wait below as it
	// happens (the workers' exit, the job's failure or end).
	tick := time.NewTicker(d.opt.Poll) // the event loop: the coordinator's counters
	defer tick.Stop()
	var cs proto.CoordStats
	for {
		st, err := d.stats(ctx, 0)
		if err != nil {
			return nil, d.abort(ctx, err)
		}
		cs = *st.Coord
		d.observed(cs)
		for k, f := range d.opt.Faults {
			if !fired[k] && cs.Pushes >= f.AtPushes && !cs.Done && d.armed(f, cs) {
				fired[k] = true
				if err := d.fire(ctx, f, cs.Pushes); err != nil {
					return nil, d.abort(ctx, err)
				}
			}
		}
		if cs.Pushes >= nextEval && !cs.Done {
			nextEval = (cs.Pushes/evalStep + 1) * evalStep
			acc, err := d.evaluate(ctx, cs)
			if err != nil {
				return nil, d.abort(ctx, err)
			}
			d.report(cs, acc)
		}
		select {
		case <-d.cl.workersDone():
			if err := d.cl.workersErr(); err != nil {
				return nil, d.abort(ctx, err)
			}
			if st, err = d.stats(ctx, 0); err != nil {
				return nil, err
			}
			if !st.Coord.Done {
				return nil, d.abort(ctx, fmt.Errorf("launch: every worker exited after %d of %d pushes", st.Coord.Pushes, st.Coord.Target))
			}
			return d.finish(ctx, *st.Coord)
		case <-ctx.Done():
			return nil, d.abort(context.Background(), context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// observed records the coordinator's counters cs as the watch loop read
// them, and wakes whoever waits for a reading.
func (d *driver) observed(cs proto.CoordStats) {
	d.last = cs
	d.removed.Store(cs.Removed)
	d.done.Store(cs.Done)
	d.mu.Lock()
	close(d.polled)
	d.polled = make(chan struct{})
	d.mu.Unlock()
}

// abort stops the job's workers (best effort) and returns err. The stop
// gets a second of its own: ctx may be the job's, ended by the failure
// being reported.
func (d *driver) abort(ctx context.Context, err error) error {
	if len(d.obs) > 0 && d.obs[0] != nil && d.obs[0].Connected() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		d.obs[0].Stop(c)
		cancel()
	}
	return err
}

func (d *driver) report(cs proto.CoordStats, acc float64) {
	if d.progress == nil {
		return
	}
	j := &d.params.Job
	p := runstats.Progress{Pushes: cs.Pushes, Target: cs.Target, Seconds: cs.Seconds, Accuracy: acc, Live: cs.Live,
		Epoch: float64(cs.Pushes*int64(j.Batch)) / float64(d.params.TrainN)}
	if cs.Seconds > 0 {
		p.Throughput = float64(cs.Pushes) / cs.Seconds
	}
	p.WaitFraction, _ = cs.WaitFractions()
	d.progress(p)
}

// fire injects one fault. A restart runs in the background so the watch
// loop keeps polling meanwhile.
func (d *driver) fire(ctx context.Context, f Fault, pushes int64) error {
	rec := FaultRecord{Fault: f, FiredAt: pushes}
	var err error
	switch {
	case f.Duplicate:
		err = d.cl.duplicateWorker(f.Index)
	case f.Stop > 0:
		err = d.cl.pauseShard(f.Index)
	case f.Role == "worker":
		err = d.cl.killWorker(f.Index, f.Restart)
	default:
		err = d.cl.killShard(f.Index)
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	k := len(d.faults)
	d.faults = append(d.faults, rec)
	d.mu.Unlock()
	if f.Stop > 0 {
		d.fwg.Add(1)
		go func() {
			defer d.fwg.Done()
			// The shard goes on at once when the job ends first.
			resume := time.NewTimer(f.Stop) // not a poll: the fault's length, as Fault.Stop asks
			defer resume.Stop()
			select {
			case <-resume.C:
			case <-ctx.Done():
			}
			if err := d.cl.resumeShard(f.Index); err != nil && ctx.Err() == nil {
				d.fail(fmt.Errorf("launch: resuming shard %d: %w", f.Index, err))
			}
			d.mu.Lock()
			d.faults[k].Restarted = true
			d.mu.Unlock()
		}()
		return nil
	}
	if !f.Restart {
		return nil
	}
	removedAtKill := d.removed.Load()
	d.fwg.Add(1)
	go func() {
		defer d.fwg.Done()
		down := time.NewTimer(f.RestartAfter) // not a poll: the fault's downtime, as Fault.RestartAfter asks
		defer down.Stop()
		select {
		case <-down.C:
		case <-ctx.Done():
		}
		if f.AfterRemoval {
			d.awaitRemoval(ctx, removedAtKill)
		}
		r, err := d.restart(ctx, f)
		if err != nil {
			r.Restarted = false
			if ctx.Err() == nil {
				d.fail(fmt.Errorf("launch: restarting %s %d: %w", f.Role, f.Index, err))
			}
		}
		d.mu.Lock()
		d.faults[k].Restarted, d.faults[k].FromCheckpoint = r.Restarted, r.FromCheckpoint
		d.faults[k].CheckpointVersion, d.faults[k].CheckpointCRC = r.CheckpointVersion, r.CheckpointCRC
		d.faults[k].RestoredVersion, d.faults[k].RestoredCRC = r.RestoredVersion, r.RestoredCRC
		d.mu.Unlock()
	}()
	return nil
}

// awaitRemoval returns once the watch loop has seen more removals than
// before (or ctx ends, or the job is done: a restart then finds the job
// over, as any late worker would). It waits for the loop's readings.
func (d *driver) awaitRemoval(ctx context.Context, before int64) {
	for {
		d.mu.Lock()
		next := d.polled // taken before the check: a reading after it closes next
		d.mu.Unlock()
		if d.removed.Load() > before || d.done.Load() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// armed reports whether fault f may fire: a worker fault once its victim
// has pushed (it is mid-run, not still loading its data), a shard fault
// that waits for a checkpoint once the shard has written one.
func (d *driver) armed(f Fault, cs proto.CoordStats) bool {
	if f.Role == "worker" {
		return f.Index < len(cs.WorkerPushes) && cs.WorkerPushes[f.Index] > 0
	}
	if !f.AfterCheckpoint {
		return true
	}
	_, err := os.Stat(ckpt.Path(d.opt.CheckpointDir, f.Index))
	return err == nil
}

func (d *driver) restart(ctx context.Context, f Fault) (FaultRecord, error) {
	var r FaultRecord
	if f.Role == "worker" {
		err := d.cl.restartWorker(ctx, f.Index)
		r.Restarted = err == nil
		return r, err
	}
	// A shard killed before its first checkpoint still comes back: from
	// w⁰, skipping forward to the versions the workers hold. Leaving it
	// down would hold every synchronous paradigm until the timeout.
	st, err := ckpt.Read(ckpt.Path(d.opt.CheckpointDir, f.Index), live.CheckpointWant(d.params, f.Index, d.model.NumParams()))
	switch {
	case err == nil:
		r.FromCheckpoint = true
		r.CheckpointVersion, r.CheckpointCRC = st.Version, live.WeightsCRC(st.Weights)
	case !errors.Is(err, os.ErrNotExist):
		return r, err // a corrupt file: the server would refuse it too
	}
	if err := d.cl.restartShard(ctx, f.Index); err != nil {
		return r, err
	}
	r.Restarted = true
	// A separate connection: the watch loop owns the observer ones.
	o := proto.NewObserver(d.cl.transport(), d.cl.addrs()[f.Index], f.Index, d.opt.Token, d.opt.ControlToken)
	o.GiveUp = time.Minute
	defer o.Close()
	s, err := o.Stats(ctx)
	if err != nil {
		return r, err
	}
	r.RestoredVersion, r.RestoredCRC = s.Shard.RestoredVersion, s.Shard.RestoredCRC
	return r, nil
}

// finish evaluates the final weights and builds the summary.
func (d *driver) finish(ctx context.Context, cs proto.CoordStats) (*Result, error) {
	for i := 0; cs.Barriers > 0 && i < d.params.Job.Shards; i++ {
		// ElasticBSP apply=local: the final model is the one after the
		// barrier that ends the last superstep.
		if err := d.observer(i).AwaitVersion(ctx, cs.Barriers, time.Minute); err != nil {
			return nil, err
		}
	}
	acc, err := d.evaluate(ctx, cs)
	if err != nil {
		return nil, err
	}
	d.report(cs, acc)
	return d.summarize(ctx, cs)
}

// summarize collects every shard's counters and builds the summary from
// them, the coordinator's cs and the curve so far.
func (d *driver) summarize(ctx context.Context, cs proto.CoordStats) (*Result, error) {
	res := &Result{Coord: cs}
	for i := 0; i < d.params.Job.Shards; i++ {
		st, err := d.stats(ctx, i)
		if err != nil {
			return nil, err
		}
		res.Shards = append(res.Shards, st.Shard)
	}
	res.Run = record.Summary(d.params, d.opt.Mode, cs, res.Shards, &d.ev) // the final evaluation is the curve's last point
	return res, nil
}
