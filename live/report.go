package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/record"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// This file: how a job started by hand (docs/deploy.md) ends by itself
// (ServerConfig.ExitWhenDone). Shard 0 evaluates the model on the test set
// at the job's --eval-every cadence, fetching every shard's block the way
// any observer does; when the coordinator has counted the job's pushes it
// waits for the workers to leave, evaluates the final model, writes
// summary.json (the schema of pacer train) and tells every other shard to
// stop; each shard then writes its final checkpoint and Run returns nil.

// reporter is shard 0's view of the job as a whole.
type reporter struct {
	sv    *Server
	test  *data.Set // nil: the test set is not on this machine
	ev    proto.Evaluations
	model nn.Model
	w     []float32
	obs   []*proto.Observer
	// none says why there is no evaluation (model nil or test nil): the
	// summary's no_accuracy.
	none string
}

// newReporter loads the test set (only: the training set is the workers',
// unless --normalize mean needs its mean) for shard 0's evaluations.
// Without it the job still ends by itself, with a summary that has no
// accuracy.
func newReporter(sv *Server) (*reporter, error) {
	j := &sv.cfg.Params.Job
	if _, flat, err := nn.ParseFlat(j.Model); err != nil {
		return nil, err
	} else if flat {
		r := &reporter{sv: sv, none: "model " + j.Model + " is not pacer's: shard 0 cannot evaluate it; its workers do (docs/python.md)"}
		sv.log.Info("the job's model is not pacer's: shard 0 does not evaluate it, and the job's summary will have no accuracy; the workers evaluate it", "model", j.Model)
		return r, nil
	}
	m, err := job.NewModel(*j)
	if err != nil {
		return nil, err
	}
	r := &reporter{sv: sv, model: m, w: make([]float32, m.NumParams())}
	// With --normalize mean the test images are centred by the training
	// set's mean, which shard 0 computes from its own copy of the
	// (limited) training set as every worker does (job.Limit); otherwise
	// one training sample is enough.
	trainLimit := 1
	if j.Normalize == job.NormalizeMean {
		trainLimit = j.TrainLimit
	}
	ds, err := job.Data(job.Config{Dataset: j.Dataset, DataDir: j.DataDir, TrainLimit: trainLimit, TestLimit: j.TestLimit, Normalize: j.Normalize})
	if err != nil {
		sv.log.Warn("no test set on this machine: the job's summary will have no accuracy", "dataset", j.Dataset, "err", err)
		r.none = "no test set of " + j.Dataset + " on shard 0's machine"
		if j.Normalize == job.NormalizeMean {
			r.none = "no training and test set of " + j.Dataset + " on shard 0's machine (--normalize mean needs the training set's mean)"
		}
		return r, nil
	}
	if err := nn.CheckData(m, ds.Test.Name, ds.Test.Dim, ds.Test.Classes); err != nil {
		return nil, err
	}
	r.test, r.ev.Mean = ds.Test, ds.Mean // the training set's arrays go with ds
	return r, nil
}

func (r *reporter) observer(i int) *proto.Observer {
	if r.obs[i] == nil {
		r.obs[i] = proto.NewObserver(r.sv.cfg.Transport, r.sv.cfg.ShardAddrs[i], i, r.sv.cfg.Token, r.sv.cfg.ControlToken)
	}
	return r.obs[i]
}

// evaluate fetches every shard's block and measures test accuracy as of
// the coordinator's counters cs.
func (r *reporter) evaluate(ctx context.Context, cs proto.CoordStats) (float64, error) {
	if r.test == nil {
		return 0, errors.New("no test set")
	}
	for i, rg := range job.Ranges(r.model.NumParams(), len(r.sv.cfg.ShardAddrs)) {
		if err := r.observer(i).Evaluated(ctx, r.sv.cfg.Params.Job.Averaged(), r.w[rg[0]:rg[1]]); err != nil {
			return 0, fmt.Errorf("live: evaluation: shard %d's weights: %w", i, err)
		}
	}
	return record.Evaluate(&r.ev, r.sv.cfg.Params, r.model, r.w, r.test, cs), nil
}

// run evaluates at the job's cadence until the job is done, then ends it.
// It returns the error that should end Run (nil: a clean end).
func (r *reporter) run(ctx context.Context) error {
	sv, d := r.sv, r.sv.cfg.Params
	j := &d.Job
	if sv.endedBefore && sv.cfg.SummaryDir != "" {
		// Restarted after the job's end (a pod restarts when its process
		// exits): the summary written then has the job's curve, which this
		// process never saw; one written now would have a single point.
		path := filepath.Join(sv.cfg.SummaryDir, "summary.json")
		if _, err := os.Stat(path); err == nil {
			sv.log.Info("the job had ended before this restart: its summary, model and buffers stay as written then", "path", path)
			return nil
		}
	}
	r.obs = make([]*proto.Observer, len(sv.cfg.ShardAddrs))
	defer func() {
		for _, o := range r.obs {
			if o != nil {
				o.Close()
			}
		}
	}()
	evalStep := max(1, int64(j.EvalEvery*float64(d.TrainN)/float64(j.Batch)))
	next := evalStep
	// The reporter's event loop reads the coordinator's counters every
	// 100 ms: the coordinator gives no notice of a push count, and an
	// evaluation is due when the count passes the next step.
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cs := sv.coord.Stats()
		if cs.Done {
			break
		}
		if cs.Pushes >= next && r.test != nil {
			next = (cs.Pushes/evalStep + 1) * evalStep
			ectx, cancel := context.WithTimeout(ctx, time.Minute)
			acc, err := r.evaluate(ectx, cs)
			cancel()
			if err != nil {
				sv.log.Warn("evaluation failed; trying at the next one", "err", err)
				continue
			}
			sv.log.Info("evaluation", "pushes", cs.Pushes, "of", cs.Target,
				"epoch", float64(cs.Pushes*int64(j.Batch))/float64(d.TrainN), "test_accuracy", acc)
		}
	}
	return r.finish(ctx)
}

// finish ends a done job: the final evaluation, the summary, every shard
// told to stop.
func (r *reporter) finish(ctx context.Context) error {
	sv, d := r.sv, r.sv.cfg.Params
	// Workers that were mid-push when the job's last push was counted
	// finish theirs and leave; the final model is the one after them.
	// The count of worker connections gives no notice of a close, so it
	// is read every 20 ms; the bound is a guard for a worker that never
	// leaves.
	wait := time.Now().Add(max(2*d.Job.HeartbeatTimeout, 5*time.Second))
	for sv.workerConns() > 0 && time.Now().Before(wait) {
		if !proto.Sleep(ctx, 20*time.Millisecond) {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cs := sv.coord.Stats()
	for i := 0; cs.Barriers > 0 && i < len(sv.cfg.ShardAddrs); i++ {
		// ElasticBSP apply=local: the final model is the one after the
		// barrier that ends the last superstep.
		if err := r.observer(i).AwaitVersion(ctx, cs.Barriers, time.Minute); err != nil {
			return err
		}
	}
	acc, err := r.evaluate(ctx, cs)
	if err != nil && r.test != nil {
		return err
	}
	var shards []proto.ShardStats
	for i := range sv.cfg.ShardAddrs {
		st, err := r.observer(i).Stats(ctx)
		if err != nil {
			return fmt.Errorf("live: the job's summary: shard %d: %w", i, err)
		}
		shards = append(shards, st.Shard)
	}
	run := record.Summary(d, runstats.TCP, cs, shards, &r.ev)
	if len(r.ev.Curve) == 0 {
		run.NoAccuracy = r.none
	}
	var errs error
	if sv.cfg.SummaryDir != "" {
		path, err := record.Write(sv.cfg.SummaryDir, run)
		if err != nil {
			errs = fmt.Errorf("live: writing the job's summary: %w", err)
			sv.log.Error("could not write the job's summary", "err", err)
		} else {
			sv.log.Info("wrote the job's summary", "path", path)
		}
		if path, err := r.writeModel(ctx, sv.cfg.SummaryDir); err != nil {
			errs = errors.Join(errs, fmt.Errorf("live: writing the job's model: %w", err))
			sv.log.Error("could not write the job's model", "err", err)
		} else {
			sv.log.Info("wrote the job's model", "path", path)
		}
		if path, err := sv.writeBuffers(sv.cfg.SummaryDir); err != nil {
			errs = errors.Join(errs, fmt.Errorf("live: writing the workers' buffers: %w", err))
			sv.log.Error("could not write the workers' buffers", "err", err)
		} else if path != "" {
			sv.log.Info("wrote the workers' mean buffers", "path", path)
		}
	}
	if r.test == nil {
		sv.log.Info("job finished", "pushes", cs.Pushes, "seconds", cs.Seconds, "test_accuracy", "none: "+r.none)
	} else {
		sv.log.Info("job finished", "pushes", cs.Pushes, "seconds", cs.Seconds, "test_accuracy", acc, "evaluations", len(r.ev.Curve))
	}
	for i := 1; i < len(sv.cfg.ShardAddrs) && sv.cfg.ExitWhenDone; i++ {
		if err := r.endShard(ctx, i); err != nil {
			sv.log.Error("could not tell a shard the job has ended", "shard", i, "err", err)
			errs = errors.Join(errs, fmt.Errorf("live: telling shard %d the job has ended: %w", i, err))
		}
	}
	return errs
}

// writeModel writes the job's final weights, fetched from every shard as
// its evaluations fetch them, to dir/model.npz as pacer export writes a
// job's checkpoints: the one model file the job leaves beside its summary,
// where a cluster's shards keep their checkpoints on volumes of their own.
func (r *reporter) writeModel(ctx context.Context, dir string) (string, error) {
	j := &r.sv.cfg.Params.Job
	m := &modelfile.Model{Model: r.model}
	n := 0
	if r.model != nil {
		n = r.model.NumParams()
	} else if n, _, _ = nn.ParseFlat(j.Model); n > 0 {
		m.Flat = j.Model
	}
	m.Params = make([]float32, n)
	for i, rg := range job.Ranges(n, len(r.sv.cfg.ShardAddrs)) {
		if err := r.observer(i).Weights(ctx, m.Params[rg[0]:rg[1]]); err != nil {
			return "", fmt.Errorf("shard %d's weights: %w", i, err)
		}
	}
	path := filepath.Join(dir, "model.npz")
	return path, modelfile.WriteNPZ(path, m)
}

// endShard tells shard i the job has ended (it checkpoints and exits),
// through the coordinator's membership link, retrying while the shard is
// away, up to a minute.
func (r *reporter) endShard(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return r.sv.links[i].endJob(ctx)
}

// workerConns counts the workers' connections open on this server.
func (sv *Server) workerConns() int {
	sv.connMu.Lock()
	defer sv.connMu.Unlock()
	n := 0
	for k := range sv.conns {
		if k.role == proto.RoleWorker || k.role == proto.RoleControl {
			n++
		}
	}
	return n
}
