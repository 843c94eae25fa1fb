package modelfile

import (
	"fmt"

	"github.com/pacer-ps/pacer/nn"
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

// ReadFlat reads a flat model's vector from its .npz file.
func ReadFlat(path string) ([]float32, error) {
	ts, err := readTensors(path)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 || ts[0].Name != FlatArray || len(ts[0].Shape) != 1 {
		return nil, fmt.Errorf("modelfile: %s holds %s; a flat model's file holds one 1-D float32 array named %q (pacer.torch.save_flat writes one)",
			path, arrays(ts), FlatArray)
	}
	w := ts[0].Data
	if len(w) < 1 || len(w) > nn.MaxFlat {
		return nil, fmt.Errorf("modelfile: %s: %d parameters, want 1 to %d", path, len(w), nn.MaxFlat)
	}
	if i := firstNonFinite(w); i >= 0 {
		return nil, fmt.Errorf("modelfile: %s: parameter %d is %v: initial weights must be finite", path, i, w[i])
	}
	return w, nil
}

func arrays(ts []nn.Tensor) string {
	if len(ts) == 0 {
		return "no arrays"
	}
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s%v", t.Name, t.Shape)
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
