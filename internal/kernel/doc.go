// Package kernel holds the float32 numeric kernels under pacer's worker
// compute (package nn) and optimizers: level-1 vector operations
// (AxpyUnitary, ScalUnitary, Sum, DotUnitary) and a single-threaded,
// cache-blocked matrix multiply (Sgemm) with the transposes that dense and
// convolution layers need forward and backward.
//
// # Use
//
// Matrices are row-major with an explicit row stride, as in CBLAS with
// CblasRowMajor. Keep one Workspace per goroutine and call its Sgemm method:
// its packing buffers then stop allocating after the first call of each
// shape. The package-level Sgemm borrows a Workspace from a sync.Pool.
// Wrong shapes, strides or lengths panic: they are programming errors, as in
// gonum's blas packages.
//
// # Implementation
//
// Sgemm follows the BLIS/GotoBLAS structure. op(B) is cut into kc×nc
// blocks and op(A) into mc×kc blocks; each block is copied ("packed") into
// contiguous micro-panels of nr columns (B) and mr rows (A), which also
// absorbs the transposes and alpha, so one micro-kernel serves all four
// transpose combinations. The micro-kernel keeps an mr×nr = 6×16 tile of C in
// twelve 8-wide registers and performs one rank-1 update per k step: two
// loads of B, six broadcasts of A, twelve fused multiply-adds. A kc×nr panel
// of B (16 KiB) stays in L1 while it is swept against the A panels of the
// block in L2. Edge tiles are computed into a scratch tile and copied out, so
// nothing outside C is ever written. When beta is 0 the first k block stores
// instead of adding, so C is write-only.
//
// Each kernel has a Go implementation (the *Go functions, the reference and
// the fallback) and, on amd64, an AVX2/FMA assembly one (*_amd64.s). The
// choice is made once at start-up from CPUID (AVX2, FMA, and OS support for
// YMM state via XGETBV). Building with -tags noasm drops the assembly
// entirely; the tests run every implementation available in the build, so
// run them both with and without the tag.
//
// Summation order differs between the implementations (8-wide lanes,
// fused multiply-add), so results agree to rounding, not bit for bit. Within
// one build and CPU a given call is deterministic.
package kernel
