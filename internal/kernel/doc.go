// Package kernel holds the float32 numeric kernels under pacer's worker
// compute (package nn) and optimizers: level-1 vector operations
// (AxpyUnitary, ScalUnitary, Sum, DotUnitary), a single-threaded,
// cache-blocked matrix multiply (Sgemm) with the transposes that dense and
// convolution layers need forward and backward, the same product with its
// A operand gathered through two offset tables (SgemmGather: a convolution
// without a materialised im2col matrix) and its mirror that scatters the
// product onto its destination as it is stored (SgemmScatterAdd: the
// input gradient's col2im without the dcol matrix), and the element-wise layer
// kernels whose Go loops would branch on data (ReluTo, ReluBackwardTo,
// MaxPool2Row, MaxPool2RowBackward), and every loop of the optimizer's
// apply path (apply.go: Sub4, Sub1, Acc4, Momentum, with assembly; step.go:
// Acc1, SGD, Nesterov, Scale), none fused, so a shard's weights have the
// same bits on every machine.
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
// blocks, op(A) into mc×kc blocks, and a micro-kernel computes one mr×nr
// tile of C, kept in twelve vector registers, by one rank-1 update per k
// step: two loads of B, six broadcasts of A, twelve fused multiply-adds.
// The tile is 6×16 with 8-wide AVX2 registers and 6×32 with 16-wide AVX-512
// ones. A kc×nr panel of B (16 or 32 KiB) stays in L1 while it is swept
// against the row panels of the A block in L2.
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
// SgemmGather has its own micro-kernels (microGather*): the tile of
// microRows, but each of the six A values of a k step is loaded from
// x[rows[i] + cols[p]], six row pointers plus the step's offset, one more
// load per step than microRows. Its blocking is Sgemm's, so each element of
// C sums the same products in the same order as Sgemm on the materialised
// matrix, and gets the same bits on the same path. A bias row can be added
// to the first k block's tile as it is stored. SgemmScatterAdd's
// microRowsScatter* are microRows* whose six tile rows are added to C at six
// row pointers; it visits the column panels from the last one back, so
// that each element of C, which a convolution's overlapping windows reach
// from several rows, receives its terms in increasing row order, as
// col2im's loop adds them (the same bits again).
//
// The pooling kernels recompute the argmax in the backward pass by
// comparing inputs with the pooled output under a mask of lanes already
// served, which is branch-free; storing an argmax in the forward pass costs
// a mispredicted branch per comparison.
//
// # Paths
//
// Each kernel has a Go implementation (the *Go functions, the reference and
// the fallback) and, on amd64, assembly. The kernels run on one of three
// paths (Path), chosen once at start-up from CPUID:
//   - avx512: the 6×32 AVX-512 GEMM micro-kernels (gemm_avx512_amd64.s)
//     and the AVX2 ones of everything else, where the CPU has AVX512F, the
//     OS saves the ZMM state (XGETBV), and the CPU is not an AMD family 19h
//     (Zen 4 splits each 512-bit operation in two 256-bit halves, so it
//     gains nothing and stays on avx2);
//   - avx2: the AVX2/FMA assembly, 6×16 GEMM tile, where the CPU has AVX2
//     and FMA and the OS saves the YMM state;
//   - go: the Go loops; the only path of a -tags noasm build.
//
// The environment variable PACER_KERNEL=go|avx2|avx512 forces a path
// (EnvVar); a value the build or CPU cannot honour is reported by EnvErr,
// and the pacer command refuses to start with it. The tests run every
// available path (eachImpl), so run them with and without -tags noasm;
// scripts/test also runs package nn's tests on each forced path.
//
// # Agreement and determinism
//
// The avx2 and avx512 GEMMs give the same bits: each element of C is one
// vector lane that sums its k products in order with fused multiply-adds,
// in kc blocks that do not depend on the tile width (TestPathsAgree checks
// it on the shapes of a training step). SgemmGather and SgemmScatterAdd
// give the bits of Sgemm on the materialised matrix (and, for the scatter,
// of col2im after it) on each path, so the same holds for them
// (TestSgemmGather, TestSgemmScatterAdd). The go path, without fused
// multiply-adds and with scalar sums, agrees with them to rounding: within
// 1e-5·√k relative for Sgemm, 1e-5·√(n+1) for Sum and DotUnitary (the
// tolerances of the tests). Within one path a given call is deterministic,
// so a training run gives the same bytes on the same path (and, since the
// two assembly paths agree bit for bit, on either of them).
package kernel
