package kernel

import (
	"fmt"
	"sync"
)

// Blocking parameters of Sgemm (see doc.go). mr×nr is the register tile of
// the micro-kernel, nr = 16 (AVX2 and Go) or 32 (AVX-512) by path; a kc×nr
// panel of packed B (16 or 32 KiB) stays in L1 while the micro-kernel walks
// the mc×kc block of packed A (up to 144 KiB, L2); the kc×nc block of packed
// B (up to 3 MiB) lives in L3. kc does not depend on the path, so every
// element of C sums its k terms in the same blocks on every path.
const (
	mr    = 6
	nrGo  = 16 // the tile of microGo and microStridedGo
	nrMax = 32
	kcMax = 256
	mcMax = 144
	ncMax = 3072
)

// Workspace holds the packing buffers of Sgemm. The zero value is ready to
// use; buffers grow to the largest block seen and are then reused, so a
// steady stream of same-shaped products allocates nothing. A Workspace is not
// safe for concurrent use; give each goroutine its own.
type Workspace struct {
	a, b []float32
	tmp  [mr * nrMax]float32
}

var wsPool = sync.Pool{New: func() any { return new(Workspace) }}

// Sgemm is Workspace.Sgemm with a workspace taken from a pool, for callers
// that do not keep one.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	w := wsPool.Get().(*Workspace)
	w.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	wsPool.Put(w)
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices, where
// op(A) is m×k and op(B) is k×n. With transA false, A is stored m×k with row
// stride lda; with transA true it is stored k×m (op(A) = Aᵀ). Likewise B is
// stored k×n, or n×k when transB is true. C is m×n with row stride ldc. When
// beta is 0, C is only written, never read, so it may hold NaN or garbage.
// The reference loop:
//
//	for i < m, j < n { s := 0; for p < k { s += op(A)[i,p]·op(B)[p,j] }; C[i,j] = alpha·s + beta·C[i,j] }
//
// It panics if a dimension is negative, a stride is too small or a slice is
// too short for the shape it is said to hold.
func (w *Workspace) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernel: Sgemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("A", ar, ac, a, lda)
	checkMatrix("B", br, bc, b, ldb)
	checkMatrix("C", m, n, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleMatrix(beta, m, n, c, ldc)
		return
	}
	if beta != 0 && beta != 1 {
		scaleMatrix(beta, m, n, c, ldc)
		beta = 1
	}
	// Split k and m into near-equal blocks: 800 = 4×200 keeps every pass
	// of the micro-kernel long, where 3×256+32 would end on a short one.
	nr := path.nr()
	kc := split(k, kcMax, 1)
	mc := split(m, mcMax, mr)
	// An untransposed B is read in place when few row blocks of A will
	// sweep it: copying it would then cost as much as using it (the weight
	// gradients, whose B is the layer input, tall and reused by few rows).
	// Otherwise, and always for the last partial panel, B is packed.
	bInPlace := !transB && m <= 2*mcMax
	// An untransposed A is always read in place. A transposed one is too
	// when its stored rows are short (lda ≤ 32: a filter's 25 taps against
	// the whole batch of patches in the first conv layer's dWᵀ), so each
	// step of six values uses most of the cache line it touches; with longer
	// rows the steps hit a new, mostly unused line each, and packing wins.
	aInPlace := !transA || lda <= 32
	for jc := 0; jc < n; jc += ncMax {
		nb := min(ncMax, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			if bInPlace {
				if full := nb / nr * nr; full < nb {
					w.packB(false, b, ldb, pc, jc+full, kb, nb-full, nr)
				}
			} else {
				w.packB(transB, b, ldb, pc, jc, kb, nb, nr)
			}
			acc := beta != 0 || pc > 0
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				switch full := mb / mr * mr; {
				case transA && !aInPlace:
					w.packA(true, a, lda, ic, pc, mb, kb, alpha)
				case full < mb:
					w.packA(transA, a, lda, ic+full, pc, mb-full, kb, alpha)
				}
				w.macro(transA, aInPlace, bInPlace, a, lda, b, ldb, ic, jc, pc, mb, nb, kb, nr, alpha, c[ic*ldc+jc:], ldc, acc)
			}
		}
	}
}

// split returns the block length for cutting n into the fewest blocks of at
// most max, rounded up to a multiple of unit.
func split(n, max, unit int) int {
	blocks := (n + max - 1) / max
	b := (n + blocks - 1) / blocks
	return (b + unit - 1) / unit * unit
}

func checkMatrix(name string, rows, cols int, s []float32, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("kernel: Sgemm: stride of %s is %d, want >= %d", name, ld, max(1, cols)))
	}
	if rows > 0 && cols > 0 && len(s) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("kernel: Sgemm: %s has %d elements, %d×%d with stride %d needs %d",
			name, len(s), rows, cols, ld, (rows-1)*ld+cols))
	}
}

func scaleMatrix(beta float32, m, n int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
		} else if beta != 1 {
			scal(beta, row)
		}
	}
}

// macro runs the micro-kernels over the mb×kb block of op(A) at (ic, pc)
// and the kb×nb block of op(B) at (pc, jc). Full row panels of A are read
// in place when aInPlace (this spares a copy of A that costs as much as the
// product when n is small, as in convolutions); otherwise, and for the last
// partial row panel, they come packed from packA. B comes packed, or
// in place in full column panels (see Sgemm). Full tiles go straight to C;
// edge tiles are computed into tmp and only their valid part is written, so
// C is never touched out of range.
func (w *Workspace) macro(transA, aInPlace, bInPlace bool, a []float32, lda int, b []float32, ldb, ic, jc, pc, mb, nb, kb, nr int, alpha float32, c []float32, ldc int, acc bool) {
	for jr := 0; jr < nb; jr += nr {
		nw := min(nr, nb-jr)
		var bp []float32
		ldbp := nr
		switch {
		case !bInPlace:
			bp = w.b[jr*kb : jr*kb+kb*nr]
		case nw == nr:
			at := pc*ldb + jc + jr
			bp, ldbp = b[at:at+(kb-1)*ldb+nr], ldb
		default: // the packed partial panel is the only one in w.b
			bp = w.b[:kb*nr]
		}
		for ir := 0; ir < mb; ir += mr {
			mh := min(mr, mb-ir)
			off := ir*ldc + jr
			direct := mh == mr && nw == nr
			dst, ldd, accd := w.tmp[:], nr, false
			if direct {
				dst, ldd, accd = c[off:off+(mr-1)*ldc+nr], ldc, acc
			}
			switch i0 := ic + ir; {
			case !aInPlace:
				micro(kb, w.a[ir*kb:ir*kb+kb*mr], bp, ldbp, dst, ldd, accd)
			case mh < mr:
				micro(kb, w.a[:kb*mr], bp, ldbp, dst, ldd, accd)
			case transA:
				microCols(kb, a[pc*lda+i0:(pc+kb-1)*lda+i0+mr], lda, bp, ldbp, dst, ldd, alpha, accd)
			default:
				microRows(kb, a[i0*lda+pc:(i0+mr-1)*lda+pc+kb], lda, bp, ldbp, dst, ldd, alpha, accd)
			}
			if direct {
				continue
			}
			for i := 0; i < mh; i++ {
				d := c[off+i*ldc : off+i*ldc+nw]
				src := w.tmp[i*nr : i*nr+nw]
				if acc {
					for j, v := range src {
						d[j] += v
					}
				} else {
					copy(d, src)
				}
			}
		}
	}
}

// packA copies the mb×kb block of op(A) at (ic, pc), scaled by alpha, into
// panels of mr rows: panel q holds op(A)[ic+q·mr+r, pc+p] at p·mr+r. Rows past
// mb are zero so the micro-kernel can always compute full tiles. Sgemm packs
// a transposed A whole and an untransposed one only for its partial panel.
func (w *Workspace) packA(trans bool, a []float32, lda, ic, pc, mb, kb int, alpha float32) {
	panels := (mb + mr - 1) / mr
	w.a = grow(w.a, panels*mr*kb)
	if mb%mr != 0 {
		last := (panels - 1) * mr * kb
		clear(w.a[last : last+mr*kb])
	}
	if trans {
		// One pass over each stored row (a column of op(A)), dealing its
		// values out to the panels.
		for p := 0; p < kb; p++ {
			src := a[(pc+p)*lda+ic : (pc+p)*lda+ic+mb]
			for q := 0; q < panels; q++ {
				seg := src[q*mr : min(q*mr+mr, mb)]
				d := w.a[q*mr*kb+p*mr : q*mr*kb+p*mr+len(seg)]
				for r, v := range seg { // a loop: copy's call costs more for 6 values
					d[r] = alpha * v
				}
			}
		}
		return
	}
	for q := 0; q < panels; q++ {
		dst := w.a[q*mr*kb : (q+1)*mr*kb]
		i0 := ic + q*mr
		for r := 0; r < min(mr, mb-q*mr); r++ {
			src := a[(i0+r)*lda+pc : (i0+r)*lda+pc+kb]
			for p, v := range src {
				dst[p*mr+r] = alpha * v
			}
		}
	}
}

// packB copies the kb×nb block of op(B) at (pc, jc) into panels of nr
// columns: panel q holds op(B)[pc+p, jc+q·nr+j] at p·nr+j, zero past nb.
func (w *Workspace) packB(trans bool, b []float32, ldb, pc, jc, kb, nb, nr int) {
	panels := (nb + nr - 1) / nr
	w.b = grow(w.b, panels*nr*kb)
	for q := 0; q < panels; q++ {
		dst := w.b[q*nr*kb : (q+1)*nr*kb]
		j0 := jc + q*nr
		nw := min(nr, nb-q*nr)
		if nw < nr {
			clear(dst)
		}
		if trans {
			for j := 0; j < nw; j++ {
				src := b[(j0+j)*ldb+pc : (j0+j)*ldb+pc+kb]
				for p, v := range src {
					dst[p*nr+j] = v
				}
			}
			continue
		}
		for p := 0; p < kb; p++ {
			copy(dst[p*nr:p*nr+nw], b[(pc+p)*ldb+j0:(pc+p)*ldb+j0+nw])
		}
	}
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// microGo is the reference micro-kernel: C[0:mr, 0:nrGo] (row stride ldc)
// receives the product of the packed A panel a (k×mr) and the B panel b
// (k rows of nrGo values, ldb apart: nrGo when packed), added to C when acc is
// set and stored otherwise.
func microGo(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool) {
	var t [mr * nrGo]float32
	a = a[:k*mr]
	for p := 0; p < k; p++ {
		bp := b[p*ldb : p*ldb+nrGo : p*ldb+nrGo]
		ap := a[p*mr : p*mr+mr : p*mr+mr]
		for i, ai := range ap {
			ti := t[i*nrGo : i*nrGo+nrGo : i*nrGo+nrGo]
			for j, bj := range bp {
				ti[j] += ai * bj
			}
		}
	}
	storeTile(&t, 1, c, ldc, acc)
}

// microStridedGo is the reference of the in-place kernel: like microGo,
// but op(A)[i, p] is read from a[i·rs + p·cs] and the tile is scaled by
// alpha before it reaches C.
func microStridedGo(k int, a []float32, rs, cs int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool) {
	var t [mr * nrGo]float32
	for p := 0; p < k; p++ {
		bp := b[p*ldb : p*ldb+nrGo : p*ldb+nrGo]
		for i := 0; i < mr; i++ {
			ai := a[i*rs+p*cs]
			ti := t[i*nrGo : i*nrGo+nrGo : i*nrGo+nrGo]
			for j, bj := range bp {
				ti[j] += ai * bj
			}
		}
	}
	storeTile(&t, alpha, c, ldc, acc)
}

func storeTile(t *[mr * nrGo]float32, alpha float32, c []float32, ldc int, acc bool) {
	for i := 0; i < mr; i++ {
		dst := c[i*ldc : i*ldc+nrGo]
		src := t[i*nrGo : i*nrGo+nrGo]
		for j, v := range src {
			if acc {
				dst[j] += alpha * v
			} else {
				dst[j] = alpha * v
			}
		}
	}
}
