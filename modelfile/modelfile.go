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

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/data"
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
	return fromCheckpoints(dir, false, false)
}

// AverageFromCheckpoints reads the weights' moving average θ̄ that a job
// run with --ema kept, from the same checkpoints, as FromCheckpoints reads
// the weights: what a job's evaluations measured under --ema. Checkpoints
// without it are refused.
func AverageFromCheckpoints(dir string) (*Model, error) {
	return fromCheckpoints(dir, true, false)
}

// EvalFromCheckpoints reads the model pacer eval measures: the weights
// (FromCheckpoints) or, with average, their moving average
// (AverageFromCheckpoints). A flat model, which pacer cannot evaluate, is
// refused from the checkpoints' headers, before any value is read.
func EvalFromCheckpoints(dir string, average bool) (*Model, error) {
	return fromCheckpoints(dir, average, true)
}

// fromCheckpoints compares the checkpoints' headers with the model they
// name (its parameter count on one of the data sets' shapes, or a flat
// model's) before ckpt.ReadJobChecked allocates the vector, so a header cannot
// make it allocate more than a model of pacer's or the flat model it
// names holds.
func fromCheckpoints(dir string, average, evaluate bool) (*Model, error) {
	var m nn.Model
	var flat bool
	check := func(shards []ckpt.Meta) error {
		name, n := shards[0].Model, shards[0].NumParams
		if average {
			for _, s := range shards {
				// An empty range has no section to hold: it cannot say.
				if !s.EMA && s.Hi > s.Lo {
					return fmt.Errorf("modelfile: %s: the checkpoints hold no moving average of the weights (the job ran without --ema)", dir)
				}
			}
		}
		size, isFlat, err := nn.ParseFlat(name)
		if err != nil {
			return fmt.Errorf("modelfile: %s: %w", dir, err)
		}
		if isFlat {
			if evaluate {
				return notPacers(name)
			}
			if n != size {
				return fmt.Errorf("modelfile: %s: %d parameters, model %s has %d", dir, n, name, size)
			}
			flat = true
			return nil
		}
		// The checkpoints name the model, not the data set: the model's
		// input shape is the data set's whose parameter count they hold.
		var sizes []string
		for _, in := range Shapes() {
			c, err := nn.New(name, in)
			if err != nil {
				return fmt.Errorf("modelfile: %s: %w", dir, err)
			}
			if c.NumParams() == n {
				m = c
				return nil
			}
			sizes = append(sizes, fmt.Sprintf("%d on %v", c.NumParams(), in))
		}
		return fmt.Errorf("modelfile: %s: %d parameters, model %s has %s", dir, n, name, strings.Join(sizes, ", "))
	}
	j, err := ckpt.ReadJobChecked(dir, check)
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
	if flat {
		return &Model{Flat: j.Model, Params: j.Weights, Shards: j.Shards, Source: dir}, nil
	}
	return &Model{Model: m, Params: j.Weights, Shards: j.Shards, Source: dir}, nil
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

// maxNPZSize bounds the bytes of an .npz archive of at most values
// float32 values in at most arrays arrays: 4 bytes a value, deflate's
// stored blocks where compression does not pay (5 bytes in 64 KiB), per
// array its zip headers and NPY header, and the zip's directory end and
// comment. A larger file is refused from its stat size alone.
func maxNPZSize(values, arrays int) int64 {
	return 4*int64(values) + int64(values)/1024 + int64(arrays)<<12 + 1<<17
}

// readNPZ reads the .npz file at path, which is to hold at most values
// float32 values in at most arrays arrays (what), checking before the
// values are read: the file's size against those bounds, then its
// headers (npz.Open) with check. So no file makes it allocate more than
// what it expects.
func readNPZ(path string, values, arrays int, what string, check func(*npz.Archive) error) ([]nn.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("modelfile: %s is not a regular file", path)
	}
	if max := maxNPZSize(values, arrays); st.Size() > max {
		return nil, fmt.Errorf("modelfile: %s is %d bytes; %s takes at most %d: refused before reading it", path, st.Size(), what, max)
	}
	a, err := npz.Open(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	if err := check(a); err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	read, err := a.Read()
	if err != nil {
		return nil, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	ts := make([]nn.Tensor, len(read))
	for i, t := range read {
		ts[i] = nn.Tensor(t)
	}
	return ts, nil
}

// modelArrays bounds the arrays of a model file of pacer's models: more
// than any model's exchange layout has (alexnet-small's 16;
// TestModelArraysBound checks every model).
const modelArrays = 64

// candidates are the models pacer knows on every data set's shape, in
// nn.ModelOf's order: the models a model file may hold.
func candidates() []nn.Model {
	var out []nn.Model
	for _, name := range nn.Names() {
		for _, in := range Shapes() {
			if m, err := nn.New(name, in); err == nil { // else a shape too small for this model
				out = append(out, m)
			}
		}
	}
	return out
}

// layoutOf reports whether the archive's arrays are exactly m's exchange
// layout, by name and shape, in any order. Only a model whose parameter
// count is the archive's has its layout built.
func layoutOf(m nn.Model, a *npz.Archive) bool {
	if m.NumParams() != a.Values() {
		return false
	}
	ts, err := nn.Tensors(m, make([]float32, m.NumParams()))
	if err != nil || len(ts) != len(a.Arrays) {
		return false
	}
	want := make(map[string][]int, len(ts))
	for _, t := range ts {
		want[t.Name] = t.Shape
	}
	for _, arr := range a.Arrays {
		sh, ok := want[arr.Name]
		if !ok || !slices.Equal(sh, arr.Shape) {
			return false
		}
		delete(want, arr.Name) // a name given twice fails the next lookup
	}
	return true
}

// ReadNPZ reads a model file in the exchange layout; the model is the one
// whose layout its arrays match, compared on the file's headers before
// any value is read.
func ReadNPZ(path string) (*Model, error) {
	cs := candidates()
	values := 0
	for _, c := range cs {
		values = max(values, c.NumParams())
	}
	var m nn.Model
	check := func(a *npz.Archive) error {
		if len(a.Arrays) == 1 && a.Arrays[0].Name == FlatArray {
			return fmt.Errorf("a flat model's vector (%d parameters of a model pacer does not know): load it into your own model with pacer.torch.load_flat and evaluate it there (docs/python.md)", a.Arrays[0].Size)
		}
		for _, c := range cs {
			if layoutOf(c, a) {
				m = c
				return nil
			}
		}
		return fmt.Errorf("arrays %s are the layout of no model (%v) on inputs %v", arrayList(a.Arrays), nn.Names(), Shapes())
	}
	ts, err := readNPZ(path, values, modelArrays, "a model file of pacer's models", check)
	if err != nil {
		return nil, err
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
	arrays := make([]npz.Tensor, len(ts))
	for i, t := range ts {
		arrays[i] = npz.Tensor(t)
	}
	var b bytes.Buffer
	if err := npz.Write(&b, arrays); err != nil {
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
		return 0, notPacers(m.Flat)
	}
	if err := nn.CheckData(m.Model, set.Name, set.Dim, set.Classes); err != nil {
		return 0, err
	}
	acc := nn.Accuracy(m.Model, m.Params, set.X, set.Y, 500)
	return int(acc*float64(set.N) + 0.5), nil
}

// notPacers is the refusal to evaluate the flat model name.
func notPacers(name string) error {
	return fmt.Errorf("modelfile: model %s is not pacer's: pacer export writes its vector; load it into your own model (pacer.torch.load_flat) and evaluate it there (docs/python.md)", name)
}
