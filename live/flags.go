package live

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

// JobFlags are the job's flags on `pacer server`: every shard of a job
// must be given the same values (the launcher's tcp mode generates them with
// JobArgs, so the two cannot drift apart).
type JobFlags struct {
	learn     job.LearnFlags
	paradigm  string
	workers   int
	shards    int
	trainN    int
	schedule  string
	seed      uint64
	heartbeat time.Duration
}

// Bind registers the flags on fs.
func (f *JobFlags) Bind(fs *flag.FlagSet) {
	fs.StringVar(&f.paradigm, "paradigm", "bsp", "paradigm spec: "+paradigm.Forms)
	fs.IntVar(&f.workers, "workers", 1, "number of workers K the job starts with")
	fs.IntVar(&f.shards, "shards", 1, "number of shards S")
	f.learn.Bind(fs)
	fs.IntVar(&f.trainN, "train-n", 0, "training samples after --train-limit (0: load the data set to count them)")
	fs.StringVar(&f.schedule, "lr-schedule-json", "", "learning-rate schedule as optim.Schedule JSON (default constant)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of w⁰ and of the workers' batch order")
	fs.DurationVar(&f.heartbeat, "heartbeat-timeout", 5*time.Second, "remove a worker silent for this long")
}

// SetShape sets the job's number of workers and shards as the cluster's
// shape (TF_CONFIG, the environment) gives them; a zero keeps the flag's value.
func (f *JobFlags) SetShape(workers, shards int) {
	if workers > 0 {
		f.workers = workers
	}
	if shards > 0 {
		f.shards = shards
	}
}

// Params validates the flags into the job's parameters. countTrain
// returns the number of training samples when --train-n is not given.
func (f *JobFlags) Params(countTrain func(job.Config) (int, error)) (*JobParams, error) {
	sp, err := paradigm.Parse(f.paradigm)
	if err != nil {
		return nil, fmt.Errorf("--paradigm: %w", err)
	}
	if err := CheckSpec(sp); err != nil {
		return nil, fmt.Errorf("--paradigm: %w", err)
	}
	j := job.Config{Spec: sp, Workers: f.workers, Shards: f.shards, Seed: f.seed, HeartbeatTimeout: f.heartbeat}
	f.learn.ApplyTo(&j)
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
	args := append([]string{
		"--paradigm", j.Spec.String(),
		"--workers", strconv.Itoa(j.Workers),
		"--shards", strconv.Itoa(j.Shards),
		"--train-n", strconv.Itoa(p.TrainN),
		"--seed", strconv.FormatUint(j.Seed, 10),
		"--heartbeat-timeout", j.HeartbeatTimeout.String(),
	}, job.Args(j)...)
	if j.Schedule != (optim.Schedule{}) {
		b, _ := json.Marshal(j.Schedule)
		args = append(args, "--lr-schedule-json", string(b))
	}
	return args
}

// CheckSpec refuses the options whose decisions need every shard in one
// process: the simulator and virtual mode run them.
func CheckSpec(sp paradigm.Spec) error {
	switch {
	case sp.SharedSet:
		return errors.New("live: backup set=shared needs every shard in one process; live modes support set=shard (sim and virtual mode run set=shared)")
	case sp.LocalOnly:
		return errors.New("live: elastic apply=local needs the barrier to reach every shard before the release; live modes support apply=arrival (sim and virtual mode run apply=local)")
	}
	return nil
}
