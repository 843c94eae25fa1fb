package live

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

// JobFlags are the job's flags on `pacer server`: every shard of a job
// must be given the same values (Train's tcp mode generates them with
// JobArgs, so the two cannot drift apart).
type JobFlags struct {
	paradigm    string
	workers     int
	shards      int
	model       string
	dataset     string
	dataDir     string
	trainLimit  int
	testLimit   int
	trainN      int
	epochs      float64
	batch       int
	lr          float64
	momentum    float64
	weightDecay float64
	schedule    string
	seed        uint64
	fullAsyncLR bool
	heartbeat   time.Duration
}

// Bind registers the flags on fs.
func (f *JobFlags) Bind(fs *flag.FlagSet) {
	fs.StringVar(&f.paradigm, "paradigm", "bsp", "paradigm spec: "+paradigm.Forms)
	fs.IntVar(&f.workers, "workers", 1, "number of workers K the job starts with")
	fs.IntVar(&f.shards, "shards", 1, "number of shards S")
	fs.StringVar(&f.model, "model", "mlp", "model: mlp | cnn")
	fs.StringVar(&f.dataset, "dataset", "fashion-mnist", "data set (the coordinator counts its samples unless --train-n is given)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory with the data set's files")
	fs.IntVar(&f.trainLimit, "train-limit", 0, "use only the first N training samples (0: all)")
	fs.IntVar(&f.testLimit, "test-limit", 0, "use only the first N test samples (0: all)")
	fs.IntVar(&f.trainN, "train-n", 0, "training samples after --train-limit (0: load the data set to count them)")
	fs.Float64Var(&f.epochs, "epochs", 1, "passes over the training set, all workers together; the job ends after epochs·N/batch pushes")
	fs.IntVar(&f.batch, "batch", 64, "samples per worker per iteration")
	fs.Float64Var(&f.lr, "lr", 0.05, "base learning rate α₀")
	fs.Float64Var(&f.momentum, "momentum", 0.9, "momentum (0 for plain SGD)")
	fs.Float64Var(&f.weightDecay, "weight-decay", 0, "L2 weight decay")
	fs.StringVar(&f.schedule, "lr-schedule-json", "", "learning-rate schedule as optim.Schedule JSON (default constant)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of w⁰ and of the workers' batch order")
	fs.BoolVar(&f.fullAsyncLR, "full-async-lr", false, "apply each gradient of asp/ssp/dssp/elastic with the whole α₀ (default α₀/K)")
	fs.DurationVar(&f.heartbeat, "heartbeat-timeout", 5*time.Second, "remove a worker silent for this long")
}

// Params validates the flags into the job's parameters. countTrain
// returns the number of training samples when --train-n is not given.
func (f *JobFlags) Params(countTrain func(job.Config) (int, error)) (*JobParams, error) {
	sp, err := paradigm.Parse(f.paradigm)
	if err != nil {
		return nil, fmt.Errorf("--paradigm: %w", err)
	}
	mom := f.momentum
	if mom == 0 {
		mom = -1 // job.Config: negative means none
	}
	j := job.Config{Spec: sp, Workers: f.workers, Shards: f.shards, Model: f.model, Dataset: f.dataset, DataDir: f.dataDir,
		TrainLimit: f.trainLimit, TestLimit: f.testLimit, Epochs: f.epochs, Batch: f.batch, LR: f.lr, Momentum: mom,
		WeightDecay: f.weightDecay, Seed: f.seed, FullAsyncLR: f.fullAsyncLR, HeartbeatTimeout: f.heartbeat}
	if f.schedule != "" {
		var s optim.Schedule
		if err := json.Unmarshal([]byte(f.schedule), &s); err != nil {
			return nil, fmt.Errorf("--lr-schedule-json: %v", err)
		}
		j.Schedule = s
	}
	if f.heartbeat <= 0 {
		return nil, fmt.Errorf("--heartbeat-timeout=%s must be positive", f.heartbeat)
	}
	if err := j.Fill(); err != nil {
		return nil, err
	}
	if err := j.Optim().Validate(); err != nil {
		return nil, err
	}
	p := &JobParams{Job: j, Paradigm: sp.String(), TrainN: f.trainN}
	if p.TrainN < 0 {
		return nil, fmt.Errorf("--train-n=%d must not be negative", p.TrainN)
	}
	if p.TrainN == 0 && countTrain != nil {
		if p.TrainN, err = countTrain(j); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// JobArgs renders p as the flags JobFlags reads back.
func JobArgs(p *JobParams) []string {
	j := &p.Job
	mom := max(0, j.Momentum) // job's negative "none" is the flag's 0
	args := []string{
		"--paradigm", j.Spec.String(),
		"--workers", strconv.Itoa(j.Workers),
		"--shards", strconv.Itoa(j.Shards),
		"--model", j.Model,
		"--dataset", j.Dataset,
		"--train-limit", strconv.Itoa(j.TrainLimit),
		"--test-limit", strconv.Itoa(j.TestLimit),
		"--train-n", strconv.Itoa(p.TrainN),
		"--epochs", strconv.FormatFloat(j.Epochs, 'g', -1, 64),
		"--batch", strconv.Itoa(j.Batch),
		"--lr", strconv.FormatFloat(j.LR, 'g', -1, 64),
		"--momentum", strconv.FormatFloat(mom, 'g', -1, 64),
		"--weight-decay", strconv.FormatFloat(j.WeightDecay, 'g', -1, 64),
		"--seed", strconv.FormatUint(j.Seed, 10),
		"--heartbeat-timeout", j.HeartbeatTimeout.String(),
	}
	if j.DataDir != "" {
		args = append(args, "--data-dir", j.DataDir)
	}
	if j.FullAsyncLR {
		args = append(args, "--full-async-lr")
	}
	if j.Schedule != (optim.Schedule{}) {
		b, _ := json.Marshal(j.Schedule)
		args = append(args, "--lr-schedule-json", string(b))
	}
	return args
}
