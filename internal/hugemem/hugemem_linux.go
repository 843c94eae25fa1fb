package hugemem

import (
	"syscall"
	"unsafe"
)

// The two madvise advices (linux/mman.h); syscall does not name them.
const (
	madvHugepage = 14 // back future faults of the range with huge pages
	madvCollapse = 25 // Linux 6.1+: replace the range's present small pages now
)

// advise asks for huge pages over the 2 MB-aligned interior of x and
// touches every page. MADV_HUGEPAGE covers memory not yet faulted in (a
// fresh span of Go's heap); MADV_COLLAPSE covers memory Go had used before
// and zeroed, already on small pages. Errors are ignored on purpose: no
// huge pages means ordinary pages, never a failure.
func advise(x []float32) {
	r := interior(x)
	if len(r) == 0 {
		return
	}
	_ = syscall.Madvise(r, madvHugepage)
	for i := 0; i < len(r); i += 4096 {
		r[i] = 0 // x is zero already; the write only faults the page in
	}
	_ = syscall.Madvise(r, madvCollapse)
}

// interior is the largest 2 MB-aligned run of whole pages inside x's bytes.
func interior(x []float32) []byte {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
	p := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	lo := (Page - p%Page) % Page
	if lo >= len(b) {
		return nil
	}
	return b[lo : lo+(len(b)-lo)/Page*Page]
}
