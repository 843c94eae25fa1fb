//go:build !noasm

package kernel

// useAsm selects the AVX2/FMA assembly. It is a variable, not a constant,
// so the tests can run the Go implementations on the same machine.
var useAsm = hasAVX2FMA()

// hasAsm reports whether this build and CPU can run the assembly at all.
var hasAsm = useAsm

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

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv() (eax, edx uint32)

//go:noescape
func axpyAVX2(alpha float32, x, y []float32)

//go:noescape
func scalAVX2(alpha float32, x []float32)

//go:noescape
func sumAVX2(x []float32) float32

//go:noescape
func dotAVX2(x, y []float32) float32

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

func microCols(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	if useAsm {
		microColsAVX2(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	}
	microStridedGo(k, a, 1, lda, b, ldb, c, ldc, alpha, acc)
}

func micro(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if useAsm {
		microAVX2(k, a, b, ldb, c, ldc, acc)
		return
	}
	microGo(k, a, b, ldb, c, ldc, acc)
}

func microRows(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	if useAsm {
		microRowsAVX2(k, a, lda, b, ldb, c, ldc, alpha, acc)
		return
	}
	microStridedGo(k, a, lda, 1, b, ldb, c, ldc, alpha, acc)
}

//go:noescape
func maxPool2RowAVX2(dst, r0, r1 []float32, ow, c int)

//go:noescape
func maxPool2RowBackwardAVX2(dx0, dx1, r0, r1, y, dy []float32, ow, c int)

func maxPool2Row(dst, r0, r1 []float32, ow, c int) {
	if useAsm && c%8 == 0 {
		maxPool2RowAVX2(dst, r0, r1, ow, c)
		return
	}
	maxPool2RowGo(dst, r0, r1, ow, c)
}

func maxPool2RowBackward(dx0, dx1, r0, r1, y, dy []float32, ow, c int) {
	if useAsm && c%8 == 0 {
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
	if useAsm {
		n := len(x) &^ 7
		reluAVX2(dst, x[:n])
		reluGo(dst[n:], x[n:])
		return
	}
	reluGo(dst, x)
}

func reluBackward(dx, y, dy []float32) {
	if useAsm {
		n := len(y) &^ 7
		reluBackwardAVX2(dx, y[:n], dy)
		reluBackwardGo(dx[n:], y[n:], dy[n:])
		return
	}
	reluBackwardGo(dx, y, dy)
}

func axpy(alpha float32, x, y []float32) {
	if useAsm {
		axpyAVX2(alpha, x, y)
		return
	}
	axpyGo(alpha, x, y)
}

func scal(alpha float32, x []float32) {
	if useAsm {
		scalAVX2(alpha, x)
		return
	}
	scalGo(alpha, x)
}

func sum(x []float32) float32 {
	if useAsm {
		return sumAVX2(x)
	}
	return sumGo(x)
}

func dot(x, y []float32) float32 {
	if useAsm {
		return dotAVX2(x, y)
	}
	return dotGo(x, y)
}
