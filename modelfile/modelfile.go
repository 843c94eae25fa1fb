// Package modelfile turns a trained job into one model file and back:
// Export puts a job's shard checkpoints together into an .npz archive in
// the exchange layout (nn.Tensors, docs/model-format.md) that PyTorch
// loads without pacer, and Load reads either form, so `pacer eval`
// measures checkpoints and exported files alike.
package modelfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/live/ckpt"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/nn/npz"
)

// Model is a model and its trained parameters.
type Model struct {
	// Model is pacer's model; nil for a flat model (nn.ParseFlat), which
	// pacer knows only as its vector (Flat names it).
	nn.Model
	Flat   string
	Params []float32
	// Shards are the checkpoints' headers when it was read from them.
	Shards []ckpt.Meta
	// Source is where it was read from.
	Source string
}

// FromCheckpoints reads a job's model from its shards' checkpoints (the
// servers' --checkpoint-dir; on several machines, copy every
// shard-N.ckpt into one directory).
func FromCheckpoints(dir string) (*Model, error) {
	return fromCheckpoints(dir, false)
}

// AverageFromCheckpoints reads the weights' moving average θ̄ that a job
// run with --ema kept, from the same checkpoints, as FromCheckpoints reads
// the weights: what a job's evaluations measured under --ema. Checkpoints
// without it are refused.
func AverageFromCheckpoints(dir string) (*Model, error) {
	return fromCheckpoints(dir, true)
}

func fromCheckpoints(dir string, average bool) (*Model, error) {
	j, err := ckpt.ReadJob(dir)
	if err != nil {
		return nil, err
	}
	if average {
		if j.EMA == nil {
			// ReadJob keeps none unless every shard's checkpoint holds its block.
			return nil, fmt.Errorf("modelfile: %s: the checkpoints hold no moving average of the weights (the job ran without --ema)", dir)
		}
		j.Weights = j.EMA
	}
	if n, flat, err := nn.ParseFlat(j.Model); err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", dir, err)
	} else if flat {
		if n != len(j.Weights) {
			return nil, fmt.Errorf("modelfile: %s: %d parameters, model %s has %d", dir, len(j.Weights), j.Model, n)
		}
		return &Model{Flat: j.Model, Params: j.Weights, Shards: j.Shards, Source: dir}, nil
	}
	// The checkpoints name the model, not the data set: the model's
	// input shape is the data set's whose parameter count they hold.
	var sizes []string
	for _, in := range Shapes() {
		m, err := nn.New(j.Model, in)
		if err != nil {
			return nil, fmt.Errorf("modelfile: %s: %w", dir, err)
		}
		if m.NumParams() == len(j.Weights) {
			return &Model{Model: m, Params: j.Weights, Shards: j.Shards, Source: dir}, nil
		}
		sizes = append(sizes, fmt.Sprintf("%d on %v", m.NumParams(), in))
	}
	return nil, fmt.Errorf("modelfile: %s: %d parameters, model %s has %s", dir, len(j.Weights), j.Model, strings.Join(sizes, ", "))
}

// Shapes are the sample shapes of the data sets pacer reads (data.Names,
// each once, in that order): the inputs a model file's model may take.
func Shapes() []nn.Shape {
	var out []nn.Shape
	for _, name := range data.Names {
		im, err := data.ImageOf(name)
		if err != nil {
			continue
		}
		if in := (nn.Shape{C: im.C, H: im.H, W: im.W}); !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	return out
}

// readTensors reads every array of the .npz file at path.
func readTensors(path string) ([]nn.Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	ts, err := npz.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	return ts, nil
}

// ReadNPZ reads a model file in the exchange layout; the model is the one
// whose layout its arrays match.
func ReadNPZ(path string) (*Model, error) {
	ts, err := readTensors(path)
	if err != nil {
		return nil, err
	}
	if len(ts) == 1 && ts[0].Name == FlatArray {
		return nil, fmt.Errorf("modelfile: %s is a flat model's vector (%d parameters of a model pacer does not know): load it into your own model with pacer.torch.load_flat and evaluate it there (docs/python.md)", path, len(ts[0].Data))
	}
	m, _, err := nn.ModelOf(ts, Shapes()...)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	p, err := nn.FromTensors(m, ts)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	return &Model{Model: m, Params: p, Source: path}, nil
}

// Load reads path: a checkpoint directory, or an .npz model file.
func Load(path string) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if st.IsDir() {
		return FromCheckpoints(path)
	}
	return ReadNPZ(path)
}

// Name is the model's name: pacer's model's, or the flat model's.
func (m *Model) Name() string {
	if m.Model == nil {
		return m.Flat
	}
	return m.Model.Name()
}

// NumParams is the length of the model's vector.
func (m *Model) NumParams() int { return len(m.Params) }

// WriteNPZ writes m to path in the exchange layout, atomically (a
// temporary file renamed into place). A flat model's file holds its vector
// as one array (ReadFlat reads it; it is a valid --init).
func WriteNPZ(path string, m *Model) error {
	var ts []nn.Tensor
	if m.Model == nil {
		ts = flatTensors(m.Params)
	} else {
		var err error
		if ts, err = nn.Tensors(m.Model, m.Params); err != nil {
			return err
		}
	}
	return writeNPZ(path, ts)
}

// WriteFlat writes a flat model's vector to path (the file ReadFlat
// reads), atomically.
func WriteFlat(path string, w []float32) error { return writeNPZ(path, flatTensors(w)) }

func writeNPZ(path string, ts []nn.Tensor) error {
	var b bytes.Buffer
	if err := npz.Write(&b, ts); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".model-*.npz.tmp")
	if err != nil {
		return fmt.Errorf("modelfile: %w", err)
	}
	_, err = tmp.Write(b.Bytes())
	if err == nil {
		err = tmp.Chmod(0o644) // a model to hand on, not a secret (CreateTemp makes 0600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("modelfile: %w", err)
	}
	return nil
}

// Accuracy evaluates m on set: the samples classified right, of set.N.
// The set's shape must be the model's.
func Accuracy(m *Model, set *data.Set) (correct int, err error) {
	if m.Model == nil {
		return 0, fmt.Errorf("modelfile: model %s is not pacer's: pacer export writes its vector; load it into your own model (pacer.torch.load_flat) and evaluate it there (docs/python.md)", m.Flat)
	}
	if err := nn.CheckData(m.Model, set.Name, set.Dim, set.Classes); err != nil {
		return 0, err
	}
	acc := nn.Accuracy(m.Model, m.Params, set.X, set.Y, 500)
	return int(acc*float64(set.N) + 0.5), nil
}
