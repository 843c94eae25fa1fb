package kernel

import "fmt"

// Pooling kernels for 2×2, stride-2 max pooling of one output row of NHWC
// activations with c channels per pixel. r0 and r1 are the two input rows
// under the output row (each at least 2·ow·c long), dst the output row
// (ow·c). The backward kernel needs no stored argmax: it compares the inputs
// with the pooled output again, which costs less than recording the winner
// with data-dependent branches in the forward pass.

// MaxPool2Row writes the maximum of every 2×2 window:
//
//	for ox < ow, ch < c {
//		dst[ox·c+ch] = max(r0[2ox·c+ch], r0[(2ox+1)·c+ch], r1[2ox·c+ch], r1[(2ox+1)·c+ch])
//	}
//
// A NaN input may or may not win, depending on the implementation.
func MaxPool2Row(dst, r0, r1 []float32, ow, c int) {
	checkPool("MaxPool2Row", ow, c, []int{len(r0), len(r1)}, []int{len(dst)})
	if ow == 0 || c == 0 {
		return
	}
	maxPool2Row(dst[:ow*c], r0[:2*ow*c], r1[:2*ow*c], ow, c)
}

// MaxPool2RowBackward routes the output gradient dy of one pooled row back
// to its inputs: within each window the first input, in the order
// r0[2ox], r0[2ox+1], r1[2ox], r1[2ox+1], that equals y receives dy and the
// other three receive 0. dx0 and dx1 (the gradients of rows r0 and r1) are
// overwritten over their first 2·ow·c elements.
func MaxPool2RowBackward(dx0, dx1, r0, r1, y, dy []float32, ow, c int) {
	n := 2 * ow * c
	checkPool("MaxPool2RowBackward", ow, c, []int{len(dx0), len(dx1), len(r0), len(r1)}, []int{len(y), len(dy)})
	if ow == 0 || c == 0 {
		return
	}
	maxPool2RowBackward(dx0[:n], dx1[:n], r0[:n], r1[:n], y[:ow*c], dy[:ow*c], ow, c)
}

// checkPool panics unless every slice of rows holds 2·ow·c values and every
// slice of outs ow·c.
func checkPool(name string, ow, c int, rows, outs []int) {
	if ow < 0 || c < 0 {
		panic(fmt.Sprintf("kernel: %s: negative size ow=%d c=%d", name, ow, c))
	}
	for _, n := range rows {
		if n < 2*ow*c {
			panic(fmt.Sprintf("kernel: %s: input row of %d values, ow=%d c=%d needs %d", name, n, ow, c, 2*ow*c))
		}
	}
	for _, n := range outs {
		if n < ow*c {
			panic(fmt.Sprintf("kernel: %s: output row of %d values, ow=%d c=%d needs %d", name, n, ow, c, ow*c))
		}
	}
}

func maxPool2RowGo(dst, r0, r1 []float32, ow, c int) {
	for ox := 0; ox < ow; ox++ {
		a := r0[2*ox*c : 2*ox*c+2*c]
		b := r1[2*ox*c : 2*ox*c+2*c]
		d := dst[ox*c : ox*c+c]
		for ch := range d {
			d[ch] = max(a[ch], a[c+ch], b[ch], b[c+ch])
		}
	}
}

func maxPool2RowBackwardGo(dx0, dx1, r0, r1, y, dy []float32, ow, c int) {
	for ox := 0; ox < ow; ox++ {
		i := 2 * ox * c
		a, b := r0[i:i+2*c], r1[i:i+2*c]
		da, db := dx0[i:i+2*c], dx1[i:i+2*c]
		yy, gg := y[ox*c:ox*c+c], dy[ox*c:ox*c+c]
		for ch, v := range yy {
			g := gg[ch]
			da[ch], da[c+ch], db[ch], db[c+ch] = 0, 0, 0, 0
			switch v {
			case a[ch]:
				da[ch] = g
			case a[c+ch]:
				da[c+ch] = g
			case b[ch]:
				db[ch] = g
			case b[c+ch]:
				db[c+ch] = g
			}
		}
	}
}
