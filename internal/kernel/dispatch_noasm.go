//go:build !amd64 || noasm

package kernel

// hasAVX2, hasAVX512 and splitsZMM mirror dispatch_amd64.go; this build
// has no assembly, so PathGo is the only path.
var hasAVX2, hasAVX512, splitsZMM = false, false, false

func axpy(alpha float32, x, y []float32) { axpyGo(alpha, x, y) }

func sub4(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	sub4Go(w, g0, g1, g2, g3, b0, b1, b2, b3, d)
}

func sub1(w, g []float32, b, d float32) { sub1Go(w, g, b, d) }

func acc4(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool) {
	acc4Go(u, g0, g1, g2, g3, a0, a1, a2, a3, first)
}

func momentum(w, v, u []float32, lr, mu, wd float32) { momentumGo(w, v, u, lr, mu, wd) }

func scal(alpha float32, x []float32) { scalGo(alpha, x) }

func sum(x []float32) float32 { return sumGo(x) }

func dot(x, y []float32) float32 { return dotGo(x, y) }

func micro(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool) {
	microGo(k, a, b, ldb, c, ldc, acc)
}

func microRows(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	microStridedGo(k, a, lda, 1, b, ldb, c, ldc, alpha, acc)
}

func microCols(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	microStridedGo(k, a, 1, lda, b, ldb, c, ldc, alpha, acc)
}

func microGather(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool) {
	microGatherGo(k, x, rows, cols, b, ldb, c, ldc, bias, acc)
}

func microRowsScatter(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32) {
	microRowsScatterGo(k, a, lda, b, ldb, c, rows)
}

func maxPool2Row(dst, r0, r1 []float32, ow, c int) { maxPool2RowGo(dst, r0, r1, ow, c) }

func maxPool2RowBackward(dx0, dx1, r0, r1, y, dy []float32, ow, c int) {
	maxPool2RowBackwardGo(dx0, dx1, r0, r1, y, dy, ow, c)
}

func relu(dst, x []float32) { reluGo(dst, x) }

func reluBackward(dx, y, dy []float32) { reluBackwardGo(dx, y, dy) }
