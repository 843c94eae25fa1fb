package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gatherCase is one SgemmGather call on the offsets of a convolution's
// windows: an h×w×cin image batch, k×k filters. With taps false, A is the
// im2col matrix (rows: output pixels, columns: taps); with taps true its
// transpose (rows: taps, columns: output pixels), as in a weight gradient.
type gatherCase struct {
	batch, h, w, cin, k, n int
	taps, transB           bool
	bias                   bool
	beta                   float32
}

// convOffsets returns the offset in the batch of each output pixel's window
// and the offset of each tap within a window.
func convOffsets(batch, h, w, cin, k int) (pix, tap []int32) {
	oh, ow := h-k+1, w-k+1
	for n := 0; n < batch; n++ {
		for oy := 0; oy < oh; oy++ {
			for ox := 0; ox < ow; ox++ {
				pix = append(pix, int32(n*h*w*cin+(oy*w+ox)*cin))
			}
		}
	}
	for ky := 0; ky < k; ky++ {
		for kx := 0; kx < k; kx++ {
			for ci := 0; ci < cin; ci++ {
				tap = append(tap, int32((ky*w+kx)*cin+ci))
			}
		}
	}
	return pix, tap
}

// runGatherCase checks SgemmGather against what it replaces on the same
// path: C filled with the bias (or left, for beta 1), then Sgemm with beta
// 1 on the materialised A. The bits must be the same; the float64
// reference checks both against the arithmetic.
func runGatherCase(t *testing.T, r *rand.Rand, w *Workspace, tc gatherCase) []float32 {
	t.Helper()
	pix, tap := convOffsets(tc.batch, tc.h, tc.w, tc.cin, tc.k)
	rows, cols := pix, tap
	if tc.taps {
		rows, cols = tap, pix
	}
	m, n, k := len(rows), tc.n, len(cols)
	x, xok := guarded(r, tc.batch*tc.h*tc.w*tc.cin, r.IntN(4), false)
	a := make([]float32, m*k)
	for i, ro := range rows {
		for p, co := range cols {
			a[i*k+p] = x[ro+co]
		}
	}
	br, bc := k, n
	if tc.transB {
		br, bc = n, k
	}
	ldb, ldc := bc+r.IntN(3), n+r.IntN(3)
	b, bok := guarded(r, max(0, (br-1)*ldb+bc), r.IntN(4), false)
	var bias []float32
	if tc.bias {
		bias = randSlice(r, n)
	}
	c0 := randSlice(r, max(0, (m-1)*ldc+n))
	want := append([]float32(nil), c0...)
	if bias != nil {
		for i := 0; i < m; i++ {
			copy(want[i*ldc:i*ldc+n], bias)
		}
	}
	wantBeta := tc.beta
	if bias != nil {
		wantBeta = 1
	}
	w.Sgemm(false, tc.transB, m, n, k, 1, a, k, b, ldb, wantBeta, want, ldc)

	c, cok := guarded(r, len(c0), r.IntN(4), false)
	copy(c, c0)
	if tc.beta == 0 {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				c[i*ldc+j] = float32(math.NaN()) // write-only: a read would leak
			}
		}
	}
	w.SgemmGather(m, n, k, x, rows, cols, tc.transB, b, ldb, bias, tc.beta, c, ldc)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if got, wnt := c[i*ldc+j], want[i*ldc+j]; math.Float32bits(got) != math.Float32bits(wnt) {
				t.Fatalf("%+v: C[%d,%d] = %v, Sgemm on the materialised A gives %v", tc, i, j, got, wnt)
			}
		}
		for j := n; j < ldc && i*ldc+j < len(c); j++ {
			if c[i*ldc+j] != c0[i*ldc+j] {
				t.Fatalf("%+v: C element %d past row %d's end changed", tc, j, i)
			}
		}
	}
	tol := 2e-6 * math.Sqrt(float64(k)+1)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			switch {
			case bias != nil:
				s = float64(bias[j])
			case tc.beta == 1:
				s = float64(c0[i*ldc+j])
			}
			for p := 0; p < k; p++ {
				var bv float32
				if tc.transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(a[i*k+p]) * float64(bv)
			}
			if !closeTo(c[i*ldc+j], s, tol) {
				t.Fatalf("%+v: C[%d,%d] = %v, reference %v", tc, i, j, c[i*ldc+j], s)
			}
		}
	}
	if !xok() || !bok() || !cok() {
		t.Fatalf("%+v: guard overwritten", tc)
	}
	return c
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// TestSgemmGather runs the CNN's convolutions (28×28×1 → 32 and 12×12×32 →
// 64, 5×5, forward and weight gradient, on a few samples) and small odd
// shapes that leave partial tiles in both dimensions and cross the kc
// blocks, on every path; the paths must then agree as Sgemm's do.
func TestSgemmGather(t *testing.T) {
	cases := []gatherCase{
		{batch: 2, h: 28, w: 28, cin: 1, k: 5, n: 32, transB: true, bias: true},
		{batch: 2, h: 28, w: 28, cin: 1, k: 5, n: 32, taps: true},
		{batch: 2, h: 12, w: 12, cin: 32, k: 5, n: 64, transB: true, bias: true},
		{batch: 2, h: 12, w: 12, cin: 32, k: 5, n: 64, taps: true, beta: 1},
		{batch: 1, h: 12, w: 12, cin: 32, k: 5, n: 64, taps: true},
		{batch: 3, h: 7, w: 9, cin: 3, k: 3, n: 5, transB: true, bias: true},
		{batch: 3, h: 7, w: 9, cin: 3, k: 3, n: 37, taps: true, beta: 1},
		{batch: 2, h: 9, w: 8, cin: 2, k: 4, n: 17, beta: 1},
		{batch: 1, h: 6, w: 6, cin: 1, k: 6, n: 33, transB: true},
		{batch: 4, h: 5, w: 5, cin: 1, k: 2, n: 16, taps: true, bias: true},
	}
	results := map[Path][][]float32{}
	eachImpl(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		var w Workspace
		for _, tc := range cases {
			results[path] = append(results[path], runGatherCase(t, r, &w, tc))
		}
	})
	for i, tc := range cases {
		ref, asm := results[PathGo], results[PathAVX2]
		k := tc.k * tc.k * tc.cin
		if tc.taps {
			k = tc.batch * (tc.h - tc.k + 1) * (tc.w - tc.k + 1)
		}
		for _, p := range Available() {
			got := results[p][i]
			for j, v := range got {
				if p == PathAVX512 && math.Float32bits(v) != math.Float32bits(asm[i][j]) {
					t.Fatalf("%+v: avx512 and avx2 differ at %d: %v, %v", tc, j, v, asm[i][j])
				}
				if !closeTo(v, float64(ref[i][j]), 1e-5*math.Sqrt(float64(k))) {
					t.Fatalf("%+v: %s and go differ at %d: %v, %v", tc, p, j, v, ref[i][j])
				}
			}
		}
	}
}

func TestSgemmGatherPanics(t *testing.T) {
	x := make([]float32, 10)
	c := make([]float32, 4)
	b := make([]float32, 4)
	for name, f := range map[string]func(){
		"offset past x": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 8}, []int32{0, 2}, false, b, 2, nil, 0, c, 2)
		},
		"negative offset": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 1}, []int32{-2, 0}, false, b, 2, nil, 0, c, 2)
		},
		"few offsets": func() { new(Workspace).SgemmGather(2, 2, 2, x, []int32{0}, []int32{0, 1}, false, b, 2, nil, 0, c, 2) },
		"beta": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 1}, []int32{0, 1}, false, b, 2, nil, 0.5, c, 2)
		},
		"bias with beta": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 1}, []int32{0, 1}, false, b, 2, b[:2], 1, c, 2)
		},
		"short bias": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 1}, []int32{0, 1}, false, b, 2, b[:1], 0, c, 2)
		},
		"short c": func() {
			new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 1}, []int32{0, 1}, false, b, 2, nil, 0, c[:3], 2)
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
	// The largest valid offset sum, x[9], must not panic.
	new(Workspace).SgemmGather(2, 2, 2, x, []int32{0, 7}, []int32{0, 2}, false, b, 2, nil, 0, c, 2)
}
