package modelfile

import (
	"fmt"
	"os"

	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/nn/npz"
)

// This file: the file form of a flat model (nn.ParseFlat), a user's own
// PyTorch network that pacer knows only as its parameter vector. Its
// initial weights (pacer server --init) and its export (pacer export) are
// one and the same form: an .npz holding one 1-D float32 array named
// "flat", the vector in the order the workers lay it out (docs/python.md:
// model.parameters() order, each tensor row-major). pacer.torch.save_flat
// writes it from a model, pacer.torch.load_flat reads it back into one.

// FlatArray is the name of the one array of a flat model's file.
const FlatArray = "flat"

// ReadFlat reads a flat model's vector of n parameters (flat:n=N) from
// its .npz file. The file's size and headers are checked against n before
// the values are read, so it never allocates more than n values.
func ReadFlat(path string, n int) ([]float32, error) {
	if n < 1 || n > nn.MaxFlat {
		return nil, fmt.Errorf("modelfile: %s: a flat model of %d parameters: want 1 to %d", path, n, nn.MaxFlat)
	}
	check := func(a *npz.Archive) error {
		if len(a.Arrays) != 1 || a.Arrays[0].Name != FlatArray || len(a.Arrays[0].Shape) != 1 {
			return fmt.Errorf("holds %s; a flat model's file holds one 1-D float32 array named %q (pacer.torch.save_flat writes one)",
				arrayList(a.Arrays), FlatArray)
		}
		if got := a.Arrays[0].Size; got != n {
			return fmt.Errorf("%d parameters; the model has %d (refused before reading them)", got, n)
		}
		return nil
	}
	ts, err := readNPZ(path, n, 1, fmt.Sprintf("a flat model's file of %d parameters", n), check)
	if err != nil {
		return nil, err
	}
	w := ts[0].Data
	if i := firstNonFinite(w); i >= 0 {
		return nil, fmt.Errorf("modelfile: %s: parameter %d is %v: initial weights must be finite", path, i, w[i])
	}
	return w, nil
}

// arrayList names an archive's arrays and their shapes.
func arrayList(as []npz.Array) string {
	if len(as) == 0 {
		return "no arrays"
	}
	s := ""
	for i, a := range as {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s%v", a.Name, a.Shape)
	}
	return s
}

func firstNonFinite(w []float32) int {
	for i, v := range w {
		if v-v != 0 { // NaN or ±Inf
			return i
		}
	}
	return -1
}

// flatTensors is a flat model's vector as the one array of its file.
func flatTensors(w []float32) []nn.Tensor {
	return []nn.Tensor{{Name: FlatArray, Shape: []int{len(w)}, Data: w}}
}

// FlatLen is the number of parameters in the flat model's file at path,
// read from its headers alone: pacer run learns the job's N from the file
// its first worker writes, and only then reads the values (ReadFlat).
func FlatLen(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("modelfile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("modelfile: %w", err)
	}
	if max := maxNPZSize(nn.MaxFlat, 1); st.Size() > max {
		return 0, fmt.Errorf("modelfile: %s is %d bytes; a flat model's file takes at most %d: refused before reading it", path, st.Size(), max)
	}
	a, err := npz.Open(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("modelfile: %s: %w", path, err)
	}
	if len(a.Arrays) != 1 || a.Arrays[0].Name != FlatArray || len(a.Arrays[0].Shape) != 1 {
		return 0, fmt.Errorf("modelfile: %s holds %s; a flat model's file holds one 1-D float32 array named %q (pacer.torch.save_flat writes one)",
			path, arrayList(a.Arrays), FlatArray)
	}
	return a.Arrays[0].Size, nil
}
