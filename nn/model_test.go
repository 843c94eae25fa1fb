package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/internal/kernel"
)

func TestNew(t *testing.T) {
	for name, params := range map[string]int{"mlp": 235146, "cnn": 184586} {
		m, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != name || m.NumParams() != params || m.InputSize() != 784 || m.NumClasses() != 10 {
			t.Errorf("%s: name %q, %d params, input %d, %d classes", name, m.Name(), m.NumParams(), m.InputSize(), m.NumClasses())
		}
	}
	_, err := New("resnet")
	if err == nil || !strings.Contains(err.Error(), "cnn") || !strings.Contains(err.Error(), "mlp") {
		t.Errorf("New(resnet) error %v does not list the valid names", err)
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
		m, _ := New(name)
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

func TestModelGradientFull(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			m, _ := New(name)
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
		m, _ := New(name)
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
