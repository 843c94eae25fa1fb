package kernel

import "fmt"

// SgemmGather is Sgemm with an implicit A: C = A·op(B) (+ C when beta is
// 1) with A[i, p] = x[rows[i] + cols[p]], an m×k matrix that is never
// materialised. A convolution is such a product: with rows the offsets of
// the output pixels' windows and cols the offsets of the filter taps within
// a window, A is the im2col matrix; with the two swapped, its transpose.
// Reading A from x saves writing the im2col matrix and reading it back,
// which costs as much as the product when n is as small as a layer's
// filter count.
//
// op(B) is k×n: B stored k×n, or n×k when transB is true. C is m×n with row
// stride ldc. beta must be 0 (C is only written) or 1. bias, if not nil,
// holds n values added to every row of C; it requires beta 0 and is added
// to the first k block's tile as it is stored, so C costs no separate pass.
//
// Each element of C sums its k products in the same order and kc blocks as
// Sgemm does, with the same micro-kernel arithmetic, so the result has the
// same bits as filling C with bias and calling Sgemm with beta 1 on the
// materialised A (on the same path), and the assembly paths agree bit for
// bit. It panics if a dimension is negative, a stride too small, an offset
// outside x or a slice too short.
func (w *Workspace) SgemmGather(m, n, k int, x []float32, rows, cols []int32, transB bool, b []float32, ldb int, bias []float32, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernel: SgemmGather: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	if beta != 0 && beta != 1 {
		panic(fmt.Sprintf("kernel: SgemmGather: beta %v, want 0 or 1", beta))
	}
	if bias != nil && (beta != 0 || len(bias) < n) {
		panic(fmt.Sprintf("kernel: SgemmGather: bias of %d values with beta %v, want %d with beta 0", len(bias), beta, n))
	}
	if len(rows) < m || len(cols) < k {
		panic(fmt.Sprintf("kernel: SgemmGather: %d row and %d column offsets, want %d and %d", len(rows), len(cols), m, k))
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("B", br, bc, b, ldb)
	checkMatrix("C", m, n, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleMatrix(beta, m, n, c, ldc)
		if bias != nil {
			for i := 0; i < m; i++ {
				copy(c[i*ldc:i*ldc+n], bias[:n])
			}
		}
		return
	}
	// The kernels index x without bounds checks: every sum of a row and a
	// column offset must fall inside it.
	rlo, rhi := span(rows[:m])
	clo, chi := span(cols[:k])
	if rlo+clo < 0 || rhi+chi >= len(x) {
		panic(fmt.Sprintf("kernel: SgemmGather: offsets reach x[%d] and x[%d], x has %d elements", rlo+clo, rhi+chi, len(x)))
	}
	nr := path.nr()
	kc := split(k, kcMax, 1)
	mc := split(m, mcMax, mr)
	for jc := 0; jc < n; jc += ncMax {
		nb := min(ncMax, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			// B is read in place in full panels unless transposed, as in
			// Sgemm; a transposed B (a layer's weights, k×n at most 800×64)
			// is packed whole.
			if transB {
				w.packB(true, b, ldb, pc, jc, kb, nb, nr)
			} else if full := nb / nr * nr; full < nb {
				w.packB(false, b, ldb, pc, jc+full, kb, nb-full, nr)
			}
			acc := beta != 0 || pc > 0
			var bb []float32
			if !acc && bias != nil {
				bb = bias[jc : jc+nb]
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				w.macroGather(transB, x, rows[ic:ic+mb], cols[pc:pc+kb], b, ldb, jc, pc, nb, nr, bb, c[ic*ldc+jc:], ldc, acc)
			}
		}
	}
}

// span returns the least and greatest of s, which is not empty.
func span(s []int32) (lo, hi int) {
	lo, hi = int(s[0]), int(s[0])
	for _, v := range s[1:] {
		lo, hi = min(lo, int(v)), max(hi, int(v))
	}
	return lo, hi
}

// macroGather is macro for a gathered A: the rows of one mc block against
// the kb×nb block of op(B) at (pc, jc). Edge tiles go through tmp as in
// macro; a partial row tile repeats its first row's offset in the rows it
// lacks, so the kernel reads only valid elements of x.
func (w *Workspace) macroGather(transB bool, x []float32, rows, cols []int32, b []float32, ldb, jc, pc, nb, nr int, bias []float32, c []float32, ldc int, acc bool) {
	kb, mb := len(cols), len(rows)
	for jr := 0; jr < nb; jr += nr {
		nw := min(nr, nb-jr)
		var bp []float32
		ldbp := nr
		switch {
		case transB:
			bp = w.b[jr*kb : jr*kb+kb*nr]
		case nw == nr:
			at := pc*ldb + jc + jr
			bp, ldbp = b[at:at+(kb-1)*ldb+nr], ldb
		default:
			bp = w.b[:kb*nr]
		}
		var bt []float32
		if bias != nil {
			bt = bias[jr : jr+nw]
		}
		for ir := 0; ir < mb; ir += mr {
			mh := min(mr, mb-ir)
			off := ir*ldc + jr
			if mh == mr && nw == nr {
				microGather(kb, x, rows[ir:ir+mr], cols, bp, ldbp, c[off:off+(mr-1)*ldc+nr], ldc, bt, acc)
				continue
			}
			var tr [mr]int32
			for i := range tr {
				tr[i] = rows[ir+min(i, mh-1)]
			}
			microGather(kb, x, tr[:], cols, bp, ldbp, w.tmp[:], nr, nil, false)
			for i := 0; i < mh; i++ {
				d := c[off+i*ldc : off+i*ldc+nw]
				src := w.tmp[i*nr : i*nr+nw]
				switch {
				case acc:
					for j, v := range src {
						d[j] += v
					}
				case bt != nil:
					for j, v := range src {
						d[j] = bt[j] + v
					}
				default:
					copy(d, src)
				}
			}
		}
	}
}

// microGatherGo is microGo with A gathered: op(A)[i, p] = x[rows[i] +
// cols[p]] for i < mr, p < k. When acc is false and bias is not nil, bias
// (nrGo values) is added to each row of the tile as it is stored.
func microGatherGo(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool) {
	var t [mr * nrGo]float32
	rows = rows[:mr]
	for p, off := range cols[:k] {
		bp := b[p*ldb : p*ldb+nrGo : p*ldb+nrGo]
		for i, r := range rows {
			ai := x[int(r)+int(off)]
			ti := t[i*nrGo : i*nrGo+nrGo : i*nrGo+nrGo]
			for j, bj := range bp {
				ti[j] += ai * bj
			}
		}
	}
	if acc || bias == nil {
		storeTile(&t, 1, c, ldc, acc)
		return
	}
	bias = bias[:nrGo]
	for i := 0; i < mr; i++ {
		dst := c[i*ldc : i*ldc+nrGo]
		for j, v := range t[i*nrGo : i*nrGo+nrGo] {
			dst[j] = bias[j] + v
		}
	}
}
