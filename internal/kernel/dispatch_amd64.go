//go:build !noasm

package kernel

// What the CPU offers, read once at start-up. Path and the tests choose among
// them; see path.go.
var (
	hasAVX2   = hasAVX2FMA()
	hasAVX512 = hasAVX2 && hasAVX512F()
	splitsZMM = zen4()
)

// hasAVX2FMA reports whether the CPU has AVX2 and FMA and the OS saves the
// YMM registers on context switches (OSXSAVE and XCR0 bits 1 and 2).
func hasAVX2FMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}

// hasAVX512F reports whether the CPU has AVX512F and the OS saves the opmask
// and ZMM registers (XCR0 bits 5, 6 and 7). The 6×32 kernels use only
// AVX512F instructions.
func hasAVX512F() bool {
	if xcr0, _ := xgetbv(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx512f = 1 << 16
	return ebx7&avx512f != 0
}

// zen4 reports an AMD family 19h CPU (Zen 3 and Zen 4). Zen 4 has AVX-512
// but executes each 512-bit operation as two 256-bit halves, so the 6×32
// kernel does the 6×16 kernel's work with more register pressure and no
// gain; the AVX2 path stays its default. Zen 5 (family 1Ah) has full-width
// 512-bit units.
func zen4() bool {
	_, ebx, ecx, edx := cpuid(0, 0)
	if ebx != 0x68747541 || edx != 0x69746e65 || ecx != 0x444d4163 { // "AuthenticAMD"
		return false
	}
	eax1, _, _, _ := cpuid(1, 0)
	family := eax1 >> 8 & 0xf
	if family == 0xf {
		family += eax1 >> 20 & 0xff
	}
	return family == 0x19
}

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv() (eax, edx uint32)

//go:noescape
func axpyAVX2(alpha float32, x, y []float32)

//go:noescape
func sub4AVX2(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32)

//go:noescape
func sub1AVX2(w, g []float32, b, d float32)

//go:noescape
func acc4AVX2(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool)

//go:noescape
func momentumAVX2(w, v, u []float32, lr, mu, wd float32)

//go:noescape
func scalAVX2(alpha float32, x []float32)

//go:noescape
func sumAVX2(x []float32) float32

//go:noescape
func dotAVX2(x, y []float32) float32

// The other kernels (level 1, pooling, ReLU) are AVX2 on both assembly
// paths: they are bound by memory, not by FMA width.

// microAVX2 is microGo, and microRowsAVX2 and microColsAVX2 are
// microStridedGo (with rs, cs = lda, 1 and 1, lda) in assembly; the slices
// must cover a full tile.
//
//go:noescape
func microAVX2(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool)

//go:noescape
func microRowsAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)

//go:noescape
func microColsAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)

// microAVX512, microRowsAVX512 and microColsAVX512 are the same kernels
// with a 6×32 tile (gemm_avx512_amd64.s).
//
//go:noescape
func microAVX512(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool)

//go:noescape
func microRowsAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)

//go:noescape
func microColsAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)

// The GEMM micro-kernels compute a 6×path.nr() tile; Sgemm sizes its panels
// by the same path.
func microCols(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	switch path {
	case PathAVX512:
		microColsAVX512(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	case PathAVX2:
		microColsAVX2(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	}
	microStridedGo(k, a, 1, lda, b, ldb, c, ldc, alpha, acc)
}

func micro(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool) {
	switch path {
	case PathAVX512:
		microAVX512(k, a, b, ldb, c, ldc, acc)
		return
	case PathAVX2:
		microAVX2(k, a, b, ldb, c, ldc, acc)
		return
	}
	microGo(k, a, b, ldb, c, ldc, acc)
}

func microRows(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	switch path {
	case PathAVX512:
		microRowsAVX512(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	case PathAVX2:
		microRowsAVX2(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	}
	microStridedGo(k, a, lda, 1, b, ldb, c, ldc, alpha, acc)
}

// microGatherAVX2 and microGatherAVX512 are microGatherGo in assembly
// (6×16 and 6×32 tiles); rows must hold six offsets and bias, when not
// nil, a whole tile row.
//
//go:noescape
func microGatherAVX2(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool)

//go:noescape
func microGatherAVX512(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool)

func microGather(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool) {
	switch path {
	case PathAVX512:
		microGatherAVX512(k, x, rows, cols, b, ldb, c, ldc, bias, acc)
		return
	case PathAVX2:
		microGatherAVX2(k, x, rows, cols, b, ldb, c, ldc, bias, acc)
		return
	}
	microGatherGo(k, x, rows, cols, b, ldb, c, ldc, bias, acc)
}

// microRowsScatterAVX2 and microRowsScatterAVX512 are microRowsScatterGo
// in assembly; a must cover six rows and rows hold six offsets.
//
//go:noescape
func microRowsScatterAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32)

//go:noescape
func microRowsScatterAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32)

func microRowsScatter(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32) {
	switch path {
	case PathAVX512:
		microRowsScatterAVX512(k, a, lda, b, ldb, c, rows)
		return
	case PathAVX2:
		microRowsScatterAVX2(k, a, lda, b, ldb, c, rows)
		return
	}
	microRowsScatterGo(k, a, lda, b, ldb, c, rows)
}

//go:noescape
func maxPool2RowAVX2(dst, r0, r1 []float32, ow, c int)

//go:noescape
func maxPool2RowBackwardAVX2(dx0, dx1, r0, r1, y, dy []float32, ow, c int)

func maxPool2Row(dst, r0, r1 []float32, ow, c int) {
	if path != PathGo && c%8 == 0 {
		maxPool2RowAVX2(dst, r0, r1, ow, c)
		return
	}
	maxPool2RowGo(dst, r0, r1, ow, c)
}

func maxPool2RowBackward(dx0, dx1, r0, r1, y, dy []float32, ow, c int) {
	if path != PathGo && c%8 == 0 {
		maxPool2RowBackwardAVX2(dx0, dx1, r0, r1, y, dy, ow, c)
		return
	}
	maxPool2RowBackwardGo(dx0, dx1, r0, r1, y, dy, ow, c)
}

//go:noescape
func reluAVX2(dst, x []float32)

//go:noescape
func reluBackwardAVX2(dx, y, dy []float32)

func relu(dst, x []float32) {
	if path != PathGo {
		n := len(x) &^ 7
		reluAVX2(dst, x[:n])
		reluGo(dst[n:], x[n:])
		return
	}
	reluGo(dst, x)
}

func reluBackward(dx, y, dy []float32) {
	if path != PathGo {
		n := len(y) &^ 7
		reluBackwardAVX2(dx, y[:n], dy)
		reluBackwardGo(dx[n:], y[n:], dy[n:])
		return
	}
	reluBackwardGo(dx, y, dy)
}

// sub4 and sub1 run the assembly on the whole multiple of 8 and the Go
// loop on the rest: the same bits either way.
func sub4(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	if path != PathGo {
		n := len(w) &^ 7
		sub4AVX2(w[:n], g0, g1, g2, g3, b0, b1, b2, b3, d)
		sub4Go(w[n:], g0[n:], g1[n:], g2[n:], g3[n:], b0, b1, b2, b3, d)
		return
	}
	sub4Go(w, g0, g1, g2, g3, b0, b1, b2, b3, d)
}

func sub1(w, g []float32, b, d float32) {
	if path != PathGo {
		n := len(w) &^ 7
		sub1AVX2(w[:n], g, b, d)
		sub1Go(w[n:], g[n:], b, d)
		return
	}
	sub1Go(w, g, b, d)
}

func acc4(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool) {
	if path != PathGo {
		n := len(u) &^ 7
		acc4AVX2(u[:n], g0, g1, g2, g3, a0, a1, a2, a3, first)
		acc4Go(u[n:], g0[n:], g1[n:], g2[n:], g3[n:], a0, a1, a2, a3, first)
		return
	}
	acc4Go(u, g0, g1, g2, g3, a0, a1, a2, a3, first)
}

func momentum(w, v, u []float32, lr, mu, wd float32) {
	if path != PathGo {
		n := len(w) &^ 7
		momentumAVX2(w[:n], v, u, lr, mu, wd)
		momentumGo(w[n:], v[n:], u[n:], lr, mu, wd)
		return
	}
	momentumGo(w, v, u, lr, mu, wd)
}

func axpy(alpha float32, x, y []float32) {
	if path != PathGo {
		axpyAVX2(alpha, x, y)
		return
	}
	axpyGo(alpha, x, y)
}

func scal(alpha float32, x []float32) {
	if path != PathGo {
		scalAVX2(alpha, x)
		return
	}
	scalGo(alpha, x)
}

func sum(x []float32) float32 {
	if path != PathGo {
		return sumAVX2(x)
	}
	return sumGo(x)
}

func dot(x, y []float32) float32 {
	if path != PathGo {
		return dotAVX2(x, y)
	}
	return dotGo(x, y)
}
