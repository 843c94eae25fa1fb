package job

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/pacer-ps/pacer/data"
)

// LearnFlags are the learning flags every command that trains shares
// (pacer train, compare, server): bound once here so their names, defaults
// and meaning cannot drift apart between the virtual and the live drivers.
type LearnFlags struct {
	Model       string
	Dataset     string
	DataDir     string
	TrainLimit  int
	TestLimit   int
	Epochs      float64
	Batch       int
	LR          float64
	Momentum    float64 // the flag's 0 is plain SGD
	WeightDecay float64
	FullAsyncLR bool
}

// Bind registers the flags on fs.
func (f *LearnFlags) Bind(fs *flag.FlagSet) {
	fs.StringVar(&f.Model, "model", "mlp", "model: mlp | cnn")
	fs.StringVar(&f.Dataset, "dataset", "fashion-mnist", "data set: "+strings.Join(data.Names, " | "))
	fs.StringVar(&f.DataDir, "data-dir", "", "directory with the data set's files (default: $PACER_DATA, ./data/NAME, /usr/share/datasets/NAME, then download)")
	fs.IntVar(&f.TrainLimit, "train-limit", 0, "use only the first N training samples (0: all)")
	fs.IntVar(&f.TestLimit, "test-limit", 0, "use only the first N test samples (0: all)")
	fs.Float64Var(&f.Epochs, "epochs", 1, "passes over the training set, all workers together")
	fs.IntVar(&f.Batch, "batch", 64, "samples per worker per iteration")
	fs.Float64Var(&f.LR, "lr", 0.05, "base learning rate α₀")
	fs.Float64Var(&f.Momentum, "momentum", 0.9, "momentum (0 for plain SGD)")
	fs.Float64Var(&f.WeightDecay, "weight-decay", 0, "L2 weight decay")
	fs.BoolVar(&f.FullAsyncLR, "full-async-lr", false, "apply each gradient of asp/ssp/dssp/elastic with the whole α₀ (default α₀/K; see docs/paradigms.md)")
}

// ApplyTo copies the flags into c.
func (f *LearnFlags) ApplyTo(c *Config) {
	c.Model, c.Dataset, c.DataDir = f.Model, f.Dataset, f.DataDir
	c.TrainLimit, c.TestLimit = f.TrainLimit, f.TestLimit
	c.Epochs, c.Batch, c.LR, c.WeightDecay, c.FullAsyncLR = f.Epochs, f.Batch, f.LR, f.WeightDecay, f.FullAsyncLR
	c.Momentum = f.Momentum
	if c.Momentum == 0 {
		c.Momentum = -1 // Config: zero means the default, negative means none
	}
}

// Args renders c's learning settings as the flags Bind reads back.
func Args(c *Config) []string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	args := []string{"--model", c.Model, "--dataset", c.Dataset, "--train-limit", strconv.Itoa(c.TrainLimit),
		"--test-limit", strconv.Itoa(c.TestLimit), "--epochs", g(c.Epochs), "--batch", strconv.Itoa(c.Batch),
		"--lr", g(c.LR), "--momentum", g(max(0, c.Momentum)), "--weight-decay", g(c.WeightDecay),
		fmt.Sprintf("--full-async-lr=%t", c.FullAsyncLR)}
	if c.DataDir != "" {
		args = append(args, "--data-dir", c.DataDir)
	}
	return args
}
