package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

// serverJobFlags are the job's flags on `pacer server`. A job is given
// either whole, as its description (--job: what the launcher hands every
// shard), or field by field for a server started by hand (docs/deploy.md);
// every shard of a job must be given the same job.
type serverJobFlags struct {
	desc      string
	learn     job.LearnFlags
	paradigm  string
	workers   int
	shards    int
	trainN    int
	schedule  string
	seed      uint64
	heartbeat time.Duration
	evalEvery float64
	target    float64
	targets   []float64
	names     []string // the field flags, which --job excludes
	init      string
	initW     []float32 // --init's weights, read by params
}

// bind registers the flags on fs.
func (f *serverJobFlags) bind(fs *pflag.FlagSet) {
	had := map[string]bool{}
	fs.VisitAll(func(fl *pflag.Flag) { had[fl.Name] = true })
	fs.StringVar(&f.paradigm, "paradigm", "bsp", "paradigm spec: "+paradigm.Forms)
	fs.IntVar(&f.workers, "workers", job.DefaultWorkers, "number of workers K the job starts with")
	fs.IntVar(&f.shards, "shards", job.DefaultShards, "number of shards S")
	f.learn.Bind(fs)
	fs.IntVar(&f.trainN, "train-n", 0, "training samples after --train-limit (0: load the data set to count them)")
	fs.StringVar(&f.schedule, "lr-schedule", "", scheduleUsage)
	fs.Uint64Var(&f.seed, "seed", job.DefaultSeed, "seed of w⁰ and of the workers' batch order")
	fs.DurationVar(&f.heartbeat, "heartbeat-timeout", job.DefaultHeartbeatTimeout, "remove a worker silent for this long")
	fs.Float64Var(&f.evalEvery, "eval-every", job.DefaultEvalEvery, "shard 0 measures test accuracy every this many epochs (> 0)")
	fs.Float64Var(&f.target, "target", 0, "the summary reports when test accuracy first reached this (e.g. 0.85; 0: none)")
	fs.Func("targets", "the summary also reports the time and epochs to reach each of these test accuracies (e.g. 0.67,0.68)", func(v string) error {
		f.targets = f.targets[:0]
		for _, s := range strings.Split(v, ",") {
			a, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(a > 0 && a <= 1) {
				return fmt.Errorf("%q is not an accuracy in (0, 1]", s)
			}
			f.targets = append(f.targets, a)
		}
		return nil
	})
	fs.VisitAll(func(fl *pflag.Flag) {
		if !had[fl.Name] {
			f.names = append(f.names, fl.Name)
		}
	})
	fs.StringVar(&f.init, "init", "", "a flat model's initial weights (--model flat:n=N: a model of your own): an .npz of one float32 array \"flat\", as pacer.torch.save_flat writes it; every shard gets the same file (docs/python.md)")
	fs.StringVar(&f.desc, "job", "", "the whole job as its JSON description (job.Description), or a file holding it, instead of the job's other flags (pacer train --mode tcp hands its shards one)")
}

// setShape sets the job's number of workers and shards as the cluster's
// shape (TF_CONFIG, the environment) gives them; a zero keeps the flag's
// value. A --job description carries its own shape.
func (f *serverJobFlags) setShape(workers, shards int) {
	if workers > 0 {
		f.workers = workers
	}
	if shards > 0 {
		f.shards = shards
	}
}

// params validates the flags into the job's description: --job's, checked
// as received, or one built from the field flags. given reports the flags
// set on the command line. When neither --train-n nor the description
// gives the number of training samples, job.CountTrain counts them.
func (f *serverJobFlags) params(given map[string]bool) (*job.Description, error) {
	var d job.Description
	if f.desc != "" {
		for _, n := range f.names {
			if given[n] {
				return nil, fmt.Errorf("--%s: --job gives the whole job; give its fields in the description, not as flags", n)
			}
		}
		var err error
		if d, err = job.ReadDescription(f.desc); err != nil {
			return nil, fmt.Errorf("--job: %w", err)
		}
	} else {
		sp, err := paradigm.Parse(f.paradigm)
		if err != nil {
			return nil, fmt.Errorf("--paradigm: %w", err)
		}
		j := job.Config{Spec: sp, Workers: f.workers, Shards: f.shards, Seed: f.seed, HeartbeatTimeout: f.heartbeat}
		f.learn.ApplyTo(&j)
		if j.Schedule, err = optim.ParseSchedule(f.schedule); err != nil {
			return nil, fmt.Errorf("--lr-schedule: %w", err)
		}
		if f.heartbeat <= 0 {
			return nil, fmt.Errorf("--heartbeat-timeout=%s must be positive", f.heartbeat)
		}
		if f.trainN < 0 {
			return nil, fmt.Errorf("--train-n=%d must not be negative", f.trainN)
		}
		if err := job.CheckEval(f.evalEvery, f.target); err != nil {
			return nil, err
		}
		j.EvalEvery, j.Target, j.Targets = f.evalEvery, f.target, f.targets
		if d, err = job.Describe(j, f.trainN); err != nil {
			return nil, err
		}
	}
	var err error
	if f.initW, err = readInit(f.init, &d, f.desc == ""); err != nil {
		if f.desc != "" {
			return nil, fmt.Errorf("--job: %w", err)
		}
		return nil, err
	}
	if err := live.CheckJob(&d.Job); err != nil {
		if f.desc != "" {
			return nil, fmt.Errorf("--job: %w", err)
		}
		return nil, fmt.Errorf("--paradigm: %w", err)
	}
	if d.TrainN == 0 {
		n, err := job.CountTrain(d.Job)
		if err != nil {
			return nil, err
		}
		d.TrainN = n
	}
	return &d, nil
}

// readInit reads --init for the job d: a flat model's initial weights,
// whose digest it records in a description built from flags (fill) or
// checks against the one given whole (--job). Without --init it checks
// that the model needs none.
func readInit(path string, d *job.Description, fill bool) ([]float32, error) {
	j := &d.Job
	n, flat, err := nn.ParseFlat(j.Model)
	switch {
	case err != nil:
		return nil, err
	case !flat && path != "":
		return nil, fmt.Errorf("--init: model %s initializes from --seed; --init gives the initial weights of a flat model (--model flat:n=N, a model of your own)", j.Model)
	case !flat:
		return nil, live.CheckInit(j, nil)
	case path == "":
		return nil, fmt.Errorf("--model %s: give --init FILE, the model's initial weights from its own initialization (an .npz of one float32 array %q of %d values: pacer.torch.save_flat(model, FILE) writes it; docs/python.md)",
			j.Model, modelfile.FlatArray, n)
	}
	w, err := modelfile.ReadFlat(path, n)
	if err != nil {
		return nil, fmt.Errorf("--init: %w", err)
	}
	if fill {
		j.InitSHA256 = nn.FlatDigest(w)
	}
	if err := live.CheckInit(j, w); err != nil {
		return nil, fmt.Errorf("--init %s: %w", path, err)
	}
	return w, nil
}
