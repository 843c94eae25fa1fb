// Package kernel holds the float32 numeric kernels under pacer's worker
// compute (package nn) and optimizers: level-1 vector operations
// (AxpyUnitary, ScalUnitary, Sum, DotUnitary), a single-threaded,
// cache-blocked matrix multiply (Sgemm) with the transposes that dense and
// convolution layers need forward and backward, and the element-wise layer
// kernels whose Go loops would branch on data (ReluTo, ReluBackwardTo,
// MaxPool2Row, MaxPool2RowBackward).
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
// Sgemm follows the BLIS/GotoBLAS structure: op(B) is cut into kc×nc
// blocks, op(A) into mc×kc blocks, and a micro-kernel computes one mr×nr =
// 6×16 tile of C, kept in twelve 8-wide registers, by one rank-1 update per
// k step: two loads of B, six broadcasts of A, twelve fused multiply-adds.
// A kc×nr panel of B (16 KiB) stays in L1 while it is swept against the row
// panels of the A block in L2.
//
// What is copied ("packed") into contiguous panels depends on the shape,
// because with the small n of convolutions (32, 64 filters) a copy costs as
// much as the arithmetic that uses it:
//   - an untransposed A is read in place (six row pointers); only a last
//     partial panel of fewer than six rows is packed, with zero rows;
//   - a transposed A is read in place too when its stored rows are at most
//     32 floats (each step's six values then share a cache line with the
//     next steps'), and packed in one pass over its stored rows otherwise;
//   - an untransposed B is read in place when at most two mc blocks of A
//     sweep it (weight gradients: a short A against the tall layer input),
//     packed otherwise; a transposed B is always packed; a partial last
//     panel of B is packed with zero columns.
//
// alpha is folded into the packed A or applied to the finished tile. Edge
// tiles are computed into a scratch tile and only their valid part is
// written, so nothing outside C is ever touched. When beta is 0 the first k
// block stores instead of adding, so C is write-only. k and m are split into
// near-equal blocks (800 = 4×200, not 3×256+32).
//
// The pooling kernels recompute the argmax in the backward pass by
// comparing inputs with the pooled output under a mask of lanes already
// served, which is branch-free; storing an argmax in the forward pass costs
// a mispredicted branch per comparison.
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
