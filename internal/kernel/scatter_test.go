package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// runScatterCase checks SgemmScatterAdd on a convolution's offsets against
// what it replaces on the same path: Sgemm into a matrix, then col2im adding
// its rows onto c in increasing row order. The bits must be the same; a
// float64 reference checks the arithmetic.
func runScatterCase(t *testing.T, r *rand.Rand, w *Workspace, tc gatherCase) []float32 {
	t.Helper()
	rows, cols := convOffsets(tc.batch, tc.h, tc.w, tc.cin, tc.k)
	m, n, k := len(rows), len(cols), tc.n // k: the layer's filters
	lda, ldb := k+r.IntN(3), n+r.IntN(3)
	a, aok := guarded(r, (m-1)*lda+k, r.IntN(4), false)
	b, bok := guarded(r, (k-1)*ldb+n, r.IntN(4), false)
	c0 := randSlice(r, tc.batch*tc.h*tc.w*tc.cin)
	want := append([]float32(nil), c0...)
	p := make([]float32, m*n)
	w.Sgemm(false, false, m, n, k, 1, a, lda, b, ldb, 0, p, n)
	ref := make([]float64, len(c0))
	for i, v := range c0 {
		ref[i] = float64(v)
	}
	for i, ro := range rows {
		for j, co := range cols {
			want[ro+co] += p[i*n+j]
			s := 0.0
			for q := 0; q < k; q++ {
				s += float64(a[i*lda+q]) * float64(b[q*ldb+j])
			}
			ref[ro+co] += s
		}
	}
	c, cok := guarded(r, len(c0), r.IntN(4), false)
	copy(c, c0)
	w.SgemmScatterAdd(m, n, k, a, lda, b, ldb, c, rows, cols)
	tol := 2e-6 * math.Sqrt(float64(k*n)+1)
	for i := range c {
		if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%+v: c[%d] = %v, Sgemm and col2im give %v", tc, i, c[i], want[i])
		}
		if !closeTo(c[i], ref[i], tol) {
			t.Fatalf("%+v: c[%d] = %v, reference %v", tc, i, c[i], ref[i])
		}
	}
	if !aok() || !bok() || !cok() {
		t.Fatalf("%+v: guard overwritten", tc)
	}
	return c
}

// TestSgemmScatterAdd runs the CNN's second-layer input gradient (12×12×32,
// 64 filters of 5×5) on two samples, one-channel inputs whose tiles span
// several taps (and so overlap in c within a tile), and odd shapes with
// partial tiles, on every path; the assembly paths must agree bit for bit.
func TestSgemmScatterAdd(t *testing.T) {
	cases := []gatherCase{
		{batch: 5, h: 12, w: 12, cin: 32, k: 5, n: 64},
		{batch: 1, h: 12, w: 12, cin: 32, k: 5, n: 256},
		{batch: 2, h: 28, w: 28, cin: 1, k: 5, n: 32},
		{batch: 3, h: 7, w: 9, cin: 3, k: 3, n: 5},
		{batch: 2, h: 9, w: 8, cin: 2, k: 4, n: 17},
		{batch: 1, h: 6, w: 40, cin: 1, k: 6, n: 3},
		{batch: 2, h: 5, w: 5, cin: 16, k: 2, n: 1},
	}
	results := map[Path][][]float32{}
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(25, 26))
		var w Workspace
		for _, tc := range cases {
			results[path] = append(results[path], runScatterCase(t, r, &w, tc))
		}
	})
	for i, tc := range cases {
		if results[PathAVX512] == nil {
			break
		}
		for j, v := range results[PathAVX512][i] {
			if math.Float32bits(v) != math.Float32bits(results[PathAVX2][i][j]) {
				t.Fatalf("%+v: avx512 and avx2 differ at %d: %v, %v", tc, j, v, results[PathAVX2][i][j])
			}
		}
	}
}

func TestSgemmScatterAddPanics(t *testing.T) {
	c := make([]float32, 10)
	a, b := make([]float32, 2*(MaxScatterK+1)), make([]float32, 2*(MaxScatterK+1))
	for name, f := range map[string]func(){
		"offset past c": func() { new(Workspace).SgemmScatterAdd(2, 2, 1, a, 1, b, 2, c, []int32{0, 8}, []int32{0, 2}) },
		"negative":      func() { new(Workspace).SgemmScatterAdd(2, 2, 1, a, 1, b, 2, c, []int32{0, 1}, []int32{-2, 0}) },
		"few offsets":   func() { new(Workspace).SgemmScatterAdd(2, 2, 1, a, 1, b, 2, c, []int32{0, 1}, []int32{0}) },
		"k": func() {
			new(Workspace).SgemmScatterAdd(2, 2, MaxScatterK+1, a, MaxScatterK+1, b, 2, c, []int32{0, 1}, []int32{0, 1})
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
	new(Workspace).SgemmScatterAdd(2, 2, 1, a, 1, b, 2, c, []int32{0, 7}, []int32{0, 2}) // reaches c[9]: valid
}
