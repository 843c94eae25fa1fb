package kernel

import "fmt"

// MaxScatterK is the largest k SgemmScatterAdd takes: one block of k, so
// that each product is complete when its tile is added to c.
const MaxScatterK = kcMax

// SgemmScatterAdd adds the product P = A·B to the elements of c it is
// scattered to: c[rows[i] + cols[j]] += P[i, j], for A m×k (row stride lda)
// and B k×n (row stride ldb), neither transposed. It is SgemmGather's
// mirror: with rows the offsets of a convolution's windows and cols those
// of its taps, P is dcol = dy·W and the scatter is col2im, done as the
// tiles are stored instead of through an m×n matrix written and read back.
//
// Elements of c that several (i, j) reach add them up. When rows and cols
// are increasing, as windows and taps are, each element of c receives its
// terms in increasing i: the panels of columns are visited from the last
// one back, so that a larger j, which reaches an element from a smaller i,
// comes first. That is col2im's order, and each P[i, j] is computed as
// Sgemm computes it (k at most one block), so the result has the same
// bits as Sgemm into a matrix followed by that col2im on the same path.
// It panics if k exceeds MaxScatterK, a dimension is negative, a stride is too
// small, a slice too short or an offset outside c.
func (w *Workspace) SgemmScatterAdd(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, rows, cols []int32) {
	if m < 0 || n < 0 || k < 0 || k > kcMax {
		panic(fmt.Sprintf("kernel: SgemmScatterAdd: dimensions m=%d n=%d k=%d, want k in [0, %d]", m, n, k, kcMax))
	}
	if len(rows) < m || len(cols) < n {
		panic(fmt.Sprintf("kernel: SgemmScatterAdd: %d row and %d column offsets, want %d and %d", len(rows), len(cols), m, n))
	}
	checkMatrix("A", m, k, a, lda)
	checkMatrix("B", k, n, b, ldb)
	if m == 0 || n == 0 || k == 0 {
		return
	}
	rlo, rhi := span(rows[:m])
	clo, chi := span(cols[:n])
	if rlo+clo < 0 || rhi+chi >= len(c) {
		panic(fmt.Sprintf("kernel: SgemmScatterAdd: offsets reach c[%d] and c[%d], c has %d elements", rlo+clo, rhi+chi, len(c)))
	}
	nr := path.nr()
	mc := split(m, mcMax, mr)
	bInPlace := m <= 2*mcMax // as in Sgemm
	for jc := (n - 1) / ncMax * ncMax; jc >= 0; jc -= ncMax {
		nb := min(ncMax, n-jc)
		if bInPlace {
			if full := nb / nr * nr; full < nb {
				w.packB(false, b, ldb, 0, jc+full, k, nb-full, nr)
			}
		} else {
			w.packB(false, b, ldb, 0, jc, k, nb, nr)
		}
		for ic := 0; ic < m; ic += mc {
			mb := min(mc, m-ic)
			if full := mb / mr * mr; full < mb {
				w.packA(false, a, lda, ic+full, 0, mb-full, k, 1)
			}
			w.macroScatter(bInPlace, a[ic*lda:], lda, b, ldb, jc, mb, nb, k, nr, c, rows[ic:ic+mb], cols[jc:jc+nb])
		}
	}
}

// macroScatter is macro for SgemmScatterAdd's mb rows at a against the
// k×nb block of B at column jc, panels from the last. A full tile whose nr
// columns are consecutive in c goes to microRowsScatter; others are
// computed into tmp and added row by row.
func (w *Workspace) macroScatter(bInPlace bool, a []float32, lda int, b []float32, ldb, jc, mb, nb, k, nr int, c []float32, rows, cols []int32) {
	for jr := (nb - 1) / nr * nr; jr >= 0; jr -= nr {
		nw := min(nr, nb-jr)
		var bp []float32
		ldbp := nr
		switch {
		case !bInPlace:
			bp = w.b[jr*k : jr*k+k*nr]
		case nw == nr:
			at := jc + jr
			bp, ldbp = b[at:at+(k-1)*ldb+nr], ldb
		default:
			bp = w.b[:k*nr]
		}
		cj := cols[jr : jr+nw]
		run := nw == nr
		for j, v := range cj {
			run = run && v == cj[0]+int32(j)
		}
		for ir := 0; ir < mb; ir += mr {
			mh := min(mr, mb-ir)
			if mh == mr && run {
				microRowsScatter(k, a[ir*lda:ir*lda+(mr-1)*lda+k], lda, bp, ldbp, c[cj[0]:], rows[ir:ir+mr])
				continue
			}
			if mh == mr {
				microRows(k, a[ir*lda:ir*lda+(mr-1)*lda+k], lda, bp, ldbp, w.tmp[:], nr, 1, false)
			} else {
				micro(k, w.a[:k*mr], bp, ldbp, w.tmp[:], nr, false)
			}
			for i := 0; i < mh; i++ {
				r := int(rows[ir+i])
				for j, v := range w.tmp[i*nr : i*nr+nw] {
					c[r+int(cj[j])] += v
				}
			}
		}
	}
}

// microRowsScatterGo is microStridedGo on A in place (row stride lda) with
// alpha 1, its tile added to c[rows[i] + j] row after row.
func microRowsScatterGo(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32) {
	var t [mr * nrGo]float32
	for p := 0; p < k; p++ {
		bp := b[p*ldb : p*ldb+nrGo : p*ldb+nrGo]
		for i := 0; i < mr; i++ {
			ai := a[i*lda+p]
			ti := t[i*nrGo : i*nrGo+nrGo : i*nrGo+nrGo]
			for j, bj := range bp {
				ti[j] += ai * bj
			}
		}
	}
	for i, r := range rows[:mr] {
		dst := c[r : int(r)+nrGo]
		for j, v := range t[i*nrGo : i*nrGo+nrGo] {
			dst[j] += v
		}
	}
}
