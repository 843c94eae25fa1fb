package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

var cifarShape = Shape{C: 3, H: 32, W: 32}

func TestNew(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     Shape
		params int
	}{
		{"mlp", Image28, 235146}, {"cnn", Image28, 184586},
		{"alexnet-small", Image28, 644554}, {"cifar-net", Image28, 83498},
		{"mlp", cifarShape, 820874}, {"cnn", cifarShape, 259914},
		{"alexnet-small", cifarShape, 990218}, {"cifar-net", cifarShape, 89578},
	} {
		m, err := New(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != c.name || m.NumParams() != c.params || m.InputSize() != c.in.Size() || m.NumClasses() != 10 {
			t.Errorf("%s on %v: name %q, %d params, input %d, %d classes", c.name, c.in, m.Name(), m.NumParams(), m.InputSize(), m.NumClasses())
		}
	}
	_, err := New("resnet", Image28)
	if err == nil || !strings.Contains(err.Error(), "cnn") || !strings.Contains(err.Error(), "mlp") ||
		!strings.Contains(err.Error(), "alexnet-small") || !strings.Contains(err.Error(), "cifar-net") {
		t.Errorf("New(resnet) error %v does not list the valid names", err)
	}
	for _, c := range []struct {
		name, want string
		in         Shape
	}{
		{"cnn", "larger images than 1×8×8", Shape{1, 8, 8}},
		{"cifar-net", "larger images than 1×4×4", Shape{1, 4, 4}},
		{"mlp", "input shape 0×28×28", Shape{0, 28, 28}},
		{"cnn", "input shape 3×-1×32", Shape{3, -1, 32}},
		{"mlp", "input shape 4096×4096×1", Shape{4096, 4096, 1}},
	} {
		if _, err := New(c.name, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%s, %v) = %v, want an error with %q", c.name, c.in, err, c.want)
		}
	}
	// The MLP takes any shape, even a single feature.
	if m, err := New("mlp", Shape{1, 1, 1}); err != nil || m.InputSize() != 1 {
		t.Errorf("New(mlp, 1×1×1) = %v, %v", m, err)
	}
}

// The convolutional models on 28×28×1 have no transpose or padding in
// front of their first convolution, and on several channels the transpose
// comes first; "same" convolutions keep their input's size.
func TestModelLayers(t *testing.T) {
	kinds := func(m Model) string {
		var s []string
		for _, l := range m.(*seq).layers {
			switch l := l.(type) {
			case toNHWC:
				s = append(s, "nhwc")
			case pad:
				s = append(s, "pad"+strconv.Itoa(l.p))
			case *conv:
				s = append(s, fmt.Sprintf("conv%d:%dx%d", l.k, l.oh, l.ow))
			case *maxPool2:
				s = append(s, "pool")
			case relu:
				s = append(s, "relu")
			case *dense:
				s = append(s, fmt.Sprintf("fc%d", l.out))
			}
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		name string
		in   Shape
		want string
	}{
		{"cnn", Image28, "conv5:24x24 pool relu conv5:8x8 pool relu fc128 relu fc10"},
		{"cnn", cifarShape, "nhwc conv5:28x28 pool relu conv5:10x10 pool relu fc128 relu fc10"},
		{"mlp", cifarShape, "fc256 relu fc128 relu fc10"},
		{"cifar-net", cifarShape, "nhwc pad2 conv5:32x32 pool relu pad2 conv5:16x16 pool relu pad2 conv5:8x8 pool relu fc10"},
		{"alexnet-small", Image28, "pad2 conv5:28x28 pool relu pad2 conv5:14x14 pool relu pad1 conv3:7x7 pool relu fc384 relu fc192 relu fc10"},
	} {
		m, err := New(c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(m); got != c.want {
			t.Errorf("%s on %v:\n got %s\nwant %s", c.name, c.in, got, c.want)
		}
	}
}

func TestCheckBatch(t *testing.T) {
	m := NewMLP()
	p, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
	x, y := make([]float32, 2*784), []uint8{1, 9}
	if err := CheckBatch(m, p, g, x, y, 2); err != nil {
		t.Fatalf("valid batch: %v", err)
	}
	for name, err := range map[string]error{
		"batch":  CheckBatch(m, p, g, x, y, 0),
		"params": CheckBatch(m, p[1:], g, x, y, 2),
		"grad":   CheckBatch(m, p, g[1:], x, y, 2),
		"inputs": CheckBatch(m, p, g, x[1:], y, 2),
		"labels": CheckBatch(m, p, g, x, y[:1], 2),
		"class":  CheckBatch(m, p, g, x, []uint8{1, 10}, 2),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "label 10") {
			t.Errorf("Grad with label 10 panicked with %v", r)
		}
	}()
	m.Grad(p, g, x, []uint8{1, 10}, 2)
}

func TestInitDeterministic(t *testing.T) {
	for _, name := range Names() {
		m, _ := New(name, Image28)
		a, b, c := make([]float32, m.NumParams()), make([]float32, m.NumParams()), make([]float32, m.NumParams())
		m.Init(a, 42)
		m.Init(b, 42)
		m.Init(c, 43)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different parameters", name)
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: different seeds, same parameters", name)
		}
		// Each layer stays within its ±1/√fan_in bound and uses most of it.
		s := m.(*seq)
		for i, l := range s.layers {
			if l.numParams() == 0 {
				continue
			}
			var fanIn int
			switch l := l.(type) {
			case *dense:
				fanIn = l.in
			case *conv:
				fanIn = l.patch()
			}
			bound := float32(1 / math.Sqrt(float64(fanIn)))
			var maxAbs float32
			for _, v := range s.params(a, i) {
				maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
			}
			if maxAbs > bound || maxAbs < 0.9*bound {
				t.Errorf("%s layer %d: max |w| %v, bound %v", name, i, maxAbs, bound)
			}
		}
	}
}

// checkModelGrad compares Grad with central differences of the float64
// reference model at the given parameter indices.
func checkModelGrad(t *testing.T, s *seq, batch int, idx []int, r *rand.Rand) {
	t.Helper()
	p := make([]float32, s.NumParams())
	s.Init(p, r.Uint64())
	x := make([]float32, batch*s.InputSize())
	for i := range x {
		x[i] = r.Float32()
	}
	y := make([]uint8, batch)
	for i := range y {
		y[i] = uint8(r.IntN(s.classes))
	}
	g := make([]float32, s.NumParams())
	loss := s.Grad(p, g, x, y, batch)
	p64, x64 := to64(p), to64(x)
	f := func() float64 { return refModelLoss(s, p64, x64, y, batch) }
	if !gradClose(loss, f()) {
		t.Fatalf("loss %v, reference %v", loss, f())
	}
	for _, i := range idx {
		if n := centralDiff(p64, i, f); !gradClose(g[i], n) {
			t.Fatalf("dL/dp[%d] = %v, numeric %v", i, g[i], n)
		}
	}
}

func TestModelGradientSmall(t *testing.T) {
	// A scaled-down CNN, every parameter checked.
	r := rand.New(rand.NewPCG(15, 16))
	ws := new(kernel.Workspace)
	s := newSeq("small", 3,
		newConv(8, 8, 2, 3, 4, ws), newMaxPool2(6, 6, 4), relu{3 * 3 * 4},
		newConv(3, 3, 4, 2, 3, ws), relu{2 * 2 * 3},
		newDense(12, 5, ws), relu{5}, newDense(5, 3, ws))
	all := make([]int, s.NumParams())
	for i := range all {
		all[i] = i
	}
	checkModelGrad(t, s, 3, all, r)
}

// A small model with the layers in front of a convolution on a
// three-channel image (transpose, padding), every parameter checked.
func TestModelGradientSame(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	ws := new(kernel.Workspace)
	s := newSeq("small-same", 3,
		toNHWC{5, 5, 3}, pad{5, 5, 3, 1}, newConv(7, 7, 3, 3, 4, ws), newMaxPool2(5, 5, 4), relu{2 * 2 * 4},
		pad{2, 2, 4, 1}, newConv(4, 4, 4, 3, 2, ws), relu{2 * 2 * 2}, newDense(8, 3, ws))
	all := make([]int, s.NumParams())
	for i := range all {
		all[i] = i
	}
	checkModelGrad(t, s, 3, all, r)
}

func TestModelGradientFull(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	type run struct {
		name string
		in   Shape
	}
	var runs []run
	for _, name := range Names() {
		runs = append(runs, run{name, Image28})
	}
	// On three channels too, but for the largest model (its float64
	// reference on 32×32 takes seconds per parameter).
	runs = append(runs, run{"mlp", cifarShape}, run{"cnn", cifarShape}, run{"cifar-net", cifarShape})
	for _, c := range runs {
		name := c.name
		t.Run(name+"/"+c.in.String(), func(t *testing.T) {
			m, _ := New(name, c.in)
			s := m.(*seq)
			// A few parameters from every layer: first, last and random.
			var idx []int
			for i, l := range s.layers {
				if n := l.numParams(); n > 0 {
					idx = append(idx, s.offs[i], s.offs[i]+n-1)
					for j := 0; j < 6; j++ {
						idx = append(idx, s.offs[i]+r.IntN(n))
					}
				}
			}
			checkModelGrad(t, s, 2, idx, r)
		})
	}
}

func TestGradNoAllocs(t *testing.T) {
	for _, name := range Names() {
		m, _ := New(name, Image28)
		p, g := make([]float32, m.NumParams()), make([]float32, m.NumParams())
		m.Init(p, 1)
		// 33 samples: the CNN's second convolution sums its weight gradient
		// in two chunks.
		const batch = 33
		x, y := make([]float32, batch*784), make([]uint8, batch)
		out := make([]uint8, batch)
		m.Grad(p, g, x, y, batch)
		if n := testing.AllocsPerRun(2, func() {
			m.Grad(p, g, x, y, batch)
			m.Predict(p, x, batch, out)
		}); n != 0 {
			t.Errorf("%s: steady-state Grad+Predict allocates %v times", name, n)
		}
	}
}

// The same seed gives the same bits: two instances of each model on each
// shape, initialised from one seed and given one batch, return the same
// loss and gradient bit for bit, twice in a row (buffers reused).
func TestGradDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, in := range []Shape{Image28, cifarShape} {
		for _, name := range Names() {
			a, _ := New(name, in)
			b, _ := New(name, in)
			pa, pb := make([]float32, a.NumParams()), make([]float32, b.NumParams())
			a.Init(pa, 9)
			b.Init(pb, 9)
			const batch = 3
			x, y := randF32(r, batch*in.Size()), []uint8{1, 7, 3}
			ga, gb := make([]float32, len(pa)), make([]float32, len(pb))
			for step := 0; step < 2; step++ {
				la, lb := a.Grad(pa, ga, x, y, batch), b.Grad(pb, gb, x, y, batch)
				if math.Float32bits(la) != math.Float32bits(lb) || !slices.Equal(pa, pb) {
					t.Fatalf("%s on %v: losses %v and %v", name, in, la, lb)
				}
				for i := range ga {
					if math.Float32bits(ga[i]) != math.Float32bits(gb[i]) {
						t.Fatalf("%s on %v, step %d: gradient %d is %v and %v", name, in, step, i, ga[i], gb[i])
					}
				}
			}
		}
	}
}
