package modelfile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/nn"
)

// A model file and a job's checkpoints name no data set: the model's input
// shape is found from its tensors' shapes, or the checkpoints' parameter
// count, among the data sets' shapes (issue 18: models shaped by their
// data).
func TestLoadFindsTheInputShape(t *testing.T) {
	if got := Shapes(); !slices.Equal(got, []nn.Shape{nn.Image28, {C: 3, H: 32, W: 32}}) {
		t.Fatalf("Shapes() = %v", got)
	}
	for _, c := range []struct {
		model string
		in    nn.Shape
	}{{"cifar-net", nn.Shape{C: 3, H: 32, W: 32}}, {"cnn", nn.Image28}, {"alexnet-small", nn.Shape{C: 3, H: 32, W: 32}}} {
		m, err := nn.New(c.model, c.in)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float32, m.NumParams())
		m.Init(p, 3)
		dir := t.TempDir()
		path := filepath.Join(dir, "model.npz")
		if err := WriteNPZ(path, &Model{Model: m, Params: p}); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil || back.Name() != c.model || back.InputSize() != c.in.Size() || !slices.Equal(back.Params, p) {
			t.Fatalf("%s on %v: read back %v, %v", c.model, c.in, back, err)
		}
		n := m.NumParams()
		st := &ckpt.State{Meta: ckpt.Meta{Shard: 0, Shards: 1, Lo: 0, Hi: n, NumParams: n, Paradigm: "bsp", Model: c.model}, Weights: p}
		if _, err := ckpt.Write(dir, st); err != nil {
			t.Fatal(err)
		}
		back, err = Load(dir)
		if err != nil || back.Name() != c.model || back.InputSize() != c.in.Size() || !slices.Equal(back.Params, p) {
			t.Fatalf("%s on %v from checkpoints: read back %v, %v", c.model, c.in, back, err)
		}
		// A count that is no data set's is refused, with each shape's.
		st.Weights, st.Hi, st.NumParams = p[:n-1], n-1, n-1
		if _, err := ckpt.Write(dir, st); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "on 1×28×28") || !strings.Contains(err.Error(), "on 3×32×32") {
			t.Errorf("%s: %d parameters accepted: %v", c.model, n-1, err)
		}
	}
}
