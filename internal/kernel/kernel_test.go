package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sentinel fills guard regions; any kernel write outside its output shows
// up as a changed guard.
const sentinel = float32(-7.25e30)

// eachImpl runs f once per path this build and CPU can run (Available):
// the Go loops always, the AVX2 and AVX-512 assembly where present. It
// fails if PACER_KERNEL is set to a path that cannot run, so a CI job that
// forces a path does not pass by silently testing another.
func eachImpl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if err := EnvErr(); err != nil {
		t.Fatal(err)
	}
	saved := path
	defer func() { path = saved }()
	if len(Available()) == 1 {
		t.Log("no assembly in this build or on this CPU: only the Go path runs")
	}
	for _, p := range Available() {
		path = p
		t.Run(p.String(), f)
	}
}

// guarded returns a slice of n values from r in the middle of a buffer
// whose ends (and the slice's capacity beyond n) hold sentinels, and a
// function reporting whether the guards are intact. off shifts the start
// so that unaligned starts are exercised.
func guarded(r *rand.Rand, n, off int, intValued bool) ([]float32, func() bool) {
	const pad = 16
	buf := make([]float32, off+n+2*pad)
	for i := range buf {
		buf[i] = sentinel
	}
	s := buf[pad+off : pad+off+n]
	for i := range s {
		if intValued {
			s[i] = float32(r.IntN(9) - 4)
		} else {
			s[i] = float32(r.NormFloat64())
		}
	}
	return s, func() bool {
		for i, v := range buf {
			if (i < pad+off || i >= pad+off+n) && v != sentinel {
				return false
			}
		}
		return true
	}
}

func closeTo(got float32, want float64, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*(1+math.Abs(want))
}

// level1Lengths covers empty, every tail length of the 8- and 32-wide
// loops, and lengths long enough to run the unrolled loop several times.
func level1Lengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 1000, 4099)
}

func TestAxpy(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range level1Lengths() {
			for _, intValued := range []bool{true, false} {
				off := r.IntN(4)
				x, xok := guarded(r, n, off, intValued)
				y, yok := guarded(r, n+3, r.IntN(4), intValued)
				tail := append([]float32(nil), y[n:]...)
				want := make([]float64, n)
				alpha := float32(-1.5)
				for i := range want {
					want[i] = float64(y[i]) + float64(alpha)*float64(x[i])
				}
				AxpyUnitary(alpha, x, y)
				for i := range want {
					if intValued && float64(y[i]) != want[i] || !closeTo(y[i], want[i], 1e-6) {
						t.Fatalf("n=%d: y[%d]=%v, want %v", n, i, y[i], want[i])
					}
				}
				for i, v := range tail {
					if y[n+i] != v {
						t.Fatalf("n=%d: y[%d] past len(x) changed", n, n+i)
					}
				}
				if !xok() || !yok() {
					t.Fatalf("n=%d: guard overwritten", n)
				}
			}
		}
	})
}

func TestScal(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, n := range level1Lengths() {
			x, ok := guarded(r, n, r.IntN(4), true)
			want := make([]float32, n)
			for i, v := range x {
				want[i] = 3 * v
			}
			ScalUnitary(3, x)
			for i := range x {
				if x[i] != want[i] {
					t.Fatalf("n=%d: x[%d]=%v, want %v", n, i, x[i], want[i])
				}
			}
			if !ok() {
				t.Fatalf("n=%d: guard overwritten", n)
			}
		}
	})
}

func TestSumDot(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range level1Lengths() {
			for _, intValued := range []bool{true, false} {
				x, _ := guarded(r, n, r.IntN(4), intValued)
				y, _ := guarded(r, n+2, r.IntN(4), intValued)
				var s, d float64
				for i := range x {
					s += float64(x[i])
					d += float64(x[i]) * float64(y[i])
				}
				gs, gd := Sum(x), DotUnitary(x, y)
				if intValued && (float64(gs) != s || float64(gd) != d) {
					t.Fatalf("n=%d: sum %v dot %v, want exactly %v %v", n, gs, gd, s, d)
				}
				tol := 1e-5 * math.Sqrt(float64(n)+1)
				if !closeTo(gs, s, tol) || !closeTo(gd, d, tol) {
					t.Fatalf("n=%d: sum %v dot %v, want %v %v", n, gs, gd, s, d)
				}
			}
		}
	})
}

func TestSpecialValues(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		inf := float32(math.Inf(1))
		x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, inf}
		if s := Sum(x); !math.IsInf(float64(s), 1) {
			t.Errorf("Sum with +Inf = %v", s)
		}
		x[3] = float32(math.NaN())
		if s := DotUnitary(x, x); !math.IsNaN(float64(s)) {
			t.Errorf("Dot with NaN = %v", s)
		}
		y := make([]float32, len(x))
		AxpyUnitary(1, x, y)
		if !math.IsNaN(float64(y[3])) || !math.IsInf(float64(y[9]), 1) || y[0] != 1 {
			t.Errorf("Axpy propagated %v", y)
		}
	})
}

func TestLevel1ShortPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"axpy": func() { AxpyUnitary(1, make([]float32, 3), make([]float32, 2)) },
		"dot":  func() { DotUnitary(make([]float32, 3), make([]float32, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: short y did not panic", name)
				}
			}()
			f()
		}()
	}
}

func ExampleAxpyUnitary() {
	y := []float32{1, 1, 1}
	AxpyUnitary(2, []float32{1, 2, 3}, y)
	fmt.Println(y)
	// Output: [3 5 7]
}
