package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/spf13/cobra"
)

func init() {
	register(newExportCmd)
	register(newEvalCmd)
}

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "put a job's shard checkpoints together into one .npz model file PyTorch loads",
		Long: `Put a live job's shard checkpoints (every shard-N.ckpt of --checkpoint-dir) together into
one model file: a NumPy .npz archive in PyTorch's own names, shapes and element orders, so a
torch.nn.Module of the same architecture loads it as its state_dict without pacer. The layout
(names, shapes and order for the MLP and the CNN) is in docs/model-format.md;
python/eval_npz.py loads a file and evaluates it with PyTorch.

Checkpoints from several machines go into one directory first. The file is written
atomically; pacer eval --model-file measures it. With --average the file holds the
weights' moving average θ̄ that a job run with --ema kept in its checkpoints (what its
evaluations measured) instead of the weights, in the same form; checkpoints without one
are refused.`,
		Example: `  pacer export --checkpoint-dir ckpt --model-file model.npz
  pacer export --checkpoint-dir ckpt --model-file average.npz --average
  /usr/bin/python3 python/eval_npz.py model.npz`,
	}
	fs := cmd.Flags()
	dir := fs.String("checkpoint-dir", "", "the job's checkpoint directory (shard-0.ckpt … shard-N.ckpt)")
	file := fs.String("model-file", "model.npz", "the .npz file to write")
	average := fs.Bool("average", false, "write the weights' moving average θ̄ (a job run with --ema) instead of the weights")
	cmd.RunE = func(*cobra.Command, []string) error {
		if *dir == "" {
			return usage(errors.New("--checkpoint-dir: give the job's checkpoint directory"))
		}
		if !strings.HasSuffix(*file, ".npz") {
			return usage(fmt.Errorf("--model-file=%q: an .npz file (numpy.load reads it by its suffix)", *file))
		}
		read, what := modelfile.FromCheckpoints, ""
		if *average {
			read, what = modelfile.AverageFromCheckpoints, " (the weights' moving average, --ema)"
		}
		m, err := read(*dir)
		if err != nil {
			return err
		}
		if err := modelfile.WriteNPZ(*file, m); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: model %s%s, %d parameters from %d shard checkpoints (versions %s)\n",
			*file, m.Name(), what, m.NumParams(), len(m.Shards), versions(m))
		return nil
	}
	return cmd
}

func versions(m *modelfile.Model) string {
	v := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		v[i] = fmt.Sprint(s.Version)
	}
	return strings.Join(v, ", ")
}

func newEvalCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "evaluate a job's checkpoints or an exported model on a data set",
		Long: `Evaluate a trained model on a data set's test samples and print its accuracy: a live
job's shard checkpoints (--checkpoint-dir) or a model file pacer export wrote
(--model-file; any .npz in the layout of docs/model-format.md). The model (mlp, cnn,
alexnet-small, cifar-net...) is read from the checkpoints, or recognised from the file's
arrays.

With --checkpoint-dir, --average evaluates the weights' moving average θ̄ that a job run
with --ema kept in its checkpoints (what its own evaluations measured) instead of the
weights: the accuracy pacer export --average's file gives. Checkpoints without θ̄ are
refused, naming --ema. A model file holds one set of weights, so --average does not go
with --model-file: an exported θ̄ is evaluated as any other file.`,
		Example: `  pacer eval --checkpoint-dir ckpt
  pacer eval --checkpoint-dir ckpt --average
  pacer eval --model-file model.npz --dataset fashion-mnist --test-limit 2000`,
	}
	fs := cmd.Flags()
	dir := fs.String("checkpoint-dir", "", "a job's checkpoint directory (shard-0.ckpt … shard-N.ckpt)")
	file := fs.String("model-file", "", "an .npz model file (pacer export)")
	dataset := fs.String("dataset", job.DefaultDataset, "data set: "+strings.Join(data.Names, " | "))
	dataDir := fs.String("data-dir", "", "directory with the data set's files (default: $PACER_DATA, ./data/NAME, /usr/share/datasets/NAME, then download)")
	limit := fs.Int("test-limit", 0, "use only the first N test samples (0: all)")
	normalize := fs.String("normalize", job.NormalizeNone, "what the job that trained the model did to the images: none | mean (subtract the training set's per-channel mean over its first --train-limit samples)")
	trainLimit := fs.Int("train-limit", 0, "with --normalize mean, the job's --train-limit: the mean is over the first N training samples (0: all)")
	average := fs.Bool("average", false, "with --checkpoint-dir: evaluate the weights' moving average θ̄ (a job run with --ema) instead of the weights")
	cmd.RunE = func(*cobra.Command, []string) error {
		if (*dir == "") == (*file == "") {
			return usage(errors.New("give one of --checkpoint-dir and --model-file"))
		}
		if *average && *file != "" {
			return usage(errors.New("--average reads θ̄ from a job's checkpoints (--checkpoint-dir): a model file holds one set of weights, evaluate an exported θ̄ (pacer export --average) as any other file"))
		}
		if *limit < 0 || *trainLimit < 0 {
			return usage(fmt.Errorf("--test-limit=%d and --train-limit=%d must not be negative", *limit, *trainLimit))
		}
		jc := job.Config{Dataset: *dataset, DataDir: *dataDir, TestLimit: *limit, TrainLimit: 1, Normalize: *normalize}
		switch *normalize {
		case job.NormalizeMean:
			jc.TrainLimit = *trainLimit
		case job.NormalizeNone:
			if *trainLimit != 0 {
				return usage(errors.New("--train-limit is the mean's: it needs --normalize mean"))
			}
		default:
			return usage(fmt.Errorf("--normalize=%q: want %s or %s", *normalize, job.NormalizeNone, job.NormalizeMean))
		}
		var m *modelfile.Model
		var err error
		what := ""
		if *average {
			what = " (the weights' moving average θ̄, --ema)"
		}
		if *dir != "" {
			m, err = modelfile.EvalFromCheckpoints(*dir, *average)
		} else {
			m, err = modelfile.ReadNPZ(*file)
		}
		if err != nil {
			return err
		}
		ds, err := job.Data(jc)
		if err != nil {
			return err
		}
		correct, err := modelfile.Accuracy(m, ds.Test)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "test accuracy %.4f (%d of %d samples of %s), model %s%s from %s\n",
			float64(correct)/float64(max(ds.Test.N, 1)), correct, ds.Test.N, ds.Test.Name, m.Name(), what, m.Source)
		return nil
	}
	return cmd
}
