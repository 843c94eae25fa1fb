// Package hugemem allocates the large float blocks of the data path (a
// shard's weights and gradient buffers, a connection's receive buffer, a
// worker's parameters) on 2 MB pages where the kernel offers them.
//
// Why: these blocks are tens of megabytes streamed end to end by the
// apply, the finite check and the kernel's socket copies, and on 4 KB pages
// the hardware prefetchers stop at every page boundary and the TLB misses
// every few kilobytes. On this project's 2-core test machine (a KVM guest
// whose transparent huge pages are "madvise" only, so Go's heap never gets
// them) the vectorised finite check read 160 MB at 9.8 GB/s on 4 KB pages
// and 16.1 GB/s on 2 MB pages; an axpy, bound by its scalar arithmetic,
// gained nothing (BenchmarkStream, docs/benchmarks.md).
//
// The memory stays Go's: a block is an ordinary slice from make, collected
// like any other; only the 2 MB-aligned part inside it is advised, and
// every page of that part is touched before Floats returns, so its first
// use takes no page faults. Where the kernel has no transparent huge pages (or another
// OS), the block is an ordinary one: the advice is best effort and its
// failure changes nothing but speed.
package hugemem

// Page is the size of a huge page on amd64 and arm64 Linux.
const Page = 2 << 20

// MinFloats is the smallest block that is advised: below two huge pages,
// the aligned interior is too small a share of the block to matter.
const MinFloats = 2 * Page / 4

// Floats returns n zeroed float32 values, on huge pages where possible
// (blocks of at least MinFloats), every page already faulted in.
func Floats(n int) []float32 {
	x := make([]float32, n)
	if n >= MinFloats {
		advise(x)
	}
	return x
}
