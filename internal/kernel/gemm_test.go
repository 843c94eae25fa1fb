package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gemmCase is one Sgemm call; ldX are padded past the minimum so that the
// gaps between rows hold sentinels too.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
}

// refGemm is the reference loop in float64.
func refGemm(tc gemmCase, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) []float64 {
	out := make([]float64, tc.m*tc.n)
	for i := 0; i < tc.m; i++ {
		for j := 0; j < tc.n; j++ {
			var s float64
			for p := 0; p < tc.k; p++ {
				var av, bv float32
				if tc.transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tc.transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			s *= float64(tc.alpha)
			if tc.beta != 0 {
				s += float64(tc.beta) * float64(c[i*ldc+j])
			}
			out[i*tc.n+j] = s
		}
	}
	return out
}

func runGemmCase(t *testing.T, r *rand.Rand, w *Workspace, tc gemmCase, intValued bool) {
	t.Helper()
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = tc.k, tc.m
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = tc.n, tc.k
	}
	lda, ldb, ldc := max(1, ac)+r.IntN(3), max(1, bc)+r.IntN(3), tc.n+1+r.IntN(3)
	a, aok := guarded(r, max(0, (ar-1)*lda+ac), r.IntN(4), intValued)
	b, bok := guarded(r, max(0, (br-1)*ldb+bc), r.IntN(4), intValued)
	c, cok := guarded(r, max(0, (tc.m-1)*ldc+tc.n), r.IntN(4), intValued)
	if tc.beta == 0 {
		// C must be write-only when beta is 0: NaN would leak through a read.
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				c[i*ldc+j] = float32(math.NaN())
			}
		}
	}
	gaps := make([]float32, len(c))
	for i := 0; i < tc.m; i++ {
		for j := tc.n; j < ldc && i*ldc+j < len(c); j++ {
			c[i*ldc+j] = sentinel
			gaps[i*ldc+j] = 1
		}
	}
	want := refGemm(tc, a, lda, b, ldb, c, ldc)
	w.Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
	tol := 2e-6 * math.Sqrt(float64(tc.k)+1)
	for i := 0; i < tc.m; i++ {
		for j := 0; j < tc.n; j++ {
			got := c[i*ldc+j]
			w := want[i*tc.n+j]
			if intValued && float64(got) != w || !closeTo(got, w, tol) {
				t.Fatalf("%+v: C[%d,%d] = %v, want %v", tc, i, j, got, w)
			}
		}
	}
	for i, g := range gaps {
		if g == 1 && c[i] != sentinel {
			t.Fatalf("%+v: C element %d between rows overwritten", tc, i)
		}
	}
	if !aok() || !bok() || !cok() {
		t.Fatalf("%+v: guard overwritten", tc)
	}
}

func TestSgemmSmall(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		var w Workspace
		dims := []int{0, 1, 2, 5, 6, 7, 15, 16, 17, 31, 32, 33, 65}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for i := 0; i < 60; i++ {
					tc := gemmCase{tA, tB, dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], 1, 0}
					switch i % 4 {
					case 1:
						tc.beta = 1
					case 2:
						tc.alpha, tc.beta = -0.5, 2
					case 3:
						tc.alpha, tc.beta = 0, 0.5
					}
					runGemmCase(t, r, &w, tc, i%2 == 0)
				}
			}
		}
	})
}

// TestSgemmBlocks crosses every blocking boundary: k past kcMax, m past
// mcMax, n past ncMax, with sizes that are multiples of no block width.
func TestSgemmBlocks(t *testing.T) {
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		var w Workspace
		cases := []gemmCase{
			{false, false, 150, 37, 300, 1, 0},
			{false, true, 151, 35, 513, 1, 1},
			{true, false, 149, 49, 257, -1, 0},
			{true, true, 290, 18, 260, 0.5, 1},
			{false, true, 7, ncMax + 21, 3, 1, 0},
			{true, false, 13, ncMax + 3, 2, 1, 1},
			{false, false, 64, 256, 784, 1, 0},
			{true, false, 25, 32, 600, 1, 0}, // transposed A read in place, B in place
			{true, true, 31, 20, 530, -2, 1}, // transposed A in place, B packed
			{true, false, 40, 33, 300, 1, 1}, // transposed A packed`
		}
		for _, tc := range cases {
			runGemmCase(t, r, &w, tc, r.IntN(2) == 0)
		}
	})
}

func TestSgemmPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"negative": func() { Sgemm(false, false, -1, 1, 1, 1, nil, 1, nil, 1, 0, nil, 1) },
		"lda": func() {
			Sgemm(false, false, 2, 2, 3, 1, make([]float32, 6), 2, make([]float32, 6), 2, 0, make([]float32, 4), 2)
		},
		"short c": func() {
			Sgemm(false, false, 2, 2, 1, 1, make([]float32, 2), 1, make([]float32, 2), 2, 0, make([]float32, 3), 2)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestSgemmAllocs(t *testing.T) {
	var w Workspace
	a, b, c := make([]float32, 64*100), make([]float32, 100*40), make([]float32, 64*40)
	w.Sgemm(false, false, 64, 40, 100, 1, a, 100, b, 40, 0, c, 40)
	if n := testing.AllocsPerRun(10, func() {
		w.Sgemm(false, false, 64, 40, 100, 1, a, 100, b, 40, 0, c, 40)
	}); n != 0 {
		t.Errorf("steady-state Sgemm allocates %v times", n)
	}
}
