//go:build !noasm

#include "textflag.h"

// The 6×16 micro-kernels. All keep the C tile in Y0–Y11 (row i in Y(2i),
// Y(2i+1)) and performs one rank-1 update per k step: two loads of B (a
// packed panel, 16 floats per step), six broadcasts of A, twelve FMAs. They
// differ only in where the six A values of a step come from:
//   microAVX2      packed A panel: 6 contiguous floats per step
//   microRowsAVX2  A in place, not transposed: 6 rows lda apart, next step +4 bytes
//   microColsAVX2  A in place, transposed: 6 contiguous floats, next step +lda
// B rows are ldb floats apart: nr for a packed panel, the matrix's own
// stride when B is read in place. Four steps per iteration: B rows at DI,
// DI+ldb, DI+2ldb and R12 = DI+3ldb (R11 = ldb in bytes).
// Two broadcast registers alternate so consecutive rows do not wait on each
// other.

// STEP6 is one rank-1 update; b0, b1 address the two halves of the B row,
// m0–m5 the six A values.
#define STEP6(b0, b1, m0, m1, m2, m3, m4, m5) \
	VMOVUPS      b0, Y12 \
	VMOVUPS      b1, Y13 \
	VBROADCASTSS m0, Y14 \
	VFMADD231PS  Y12, Y14, Y0 \
	VFMADD231PS  Y13, Y14, Y1 \
	VBROADCASTSS m1, Y15 \
	VFMADD231PS  Y12, Y15, Y2 \
	VFMADD231PS  Y13, Y15, Y3 \
	VBROADCASTSS m2, Y14 \
	VFMADD231PS  Y12, Y14, Y4 \
	VFMADD231PS  Y13, Y14, Y5 \
	VBROADCASTSS m3, Y15 \
	VFMADD231PS  Y12, Y15, Y6 \
	VFMADD231PS  Y13, Y15, Y7 \
	VBROADCASTSS m4, Y14 \
	VFMADD231PS  Y12, Y14, Y8 \
	VFMADD231PS  Y13, Y14, Y9 \
	VBROADCASTSS m5, Y15 \
	VFMADD231PS  Y12, Y15, Y10 \
	VFMADD231PS  Y13, Y15, Y11

#define ZERO12 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11

// SCALE12 multiplies the tile by Y12.
#define SCALE12 \
	VMULPS Y12, Y0, Y0 \
	VMULPS Y12, Y1, Y1 \
	VMULPS Y12, Y2, Y2 \
	VMULPS Y12, Y3, Y3 \
	VMULPS Y12, Y4, Y4 \
	VMULPS Y12, Y5, Y5 \
	VMULPS Y12, Y6, Y6 \
	VMULPS Y12, Y7, Y7 \
	VMULPS Y12, Y8, Y8 \
	VMULPS Y12, Y9, Y9 \
	VMULPS Y12, Y10, Y10 \
	VMULPS Y12, Y11, Y11

// ROWADD adds accumulators ya, yb to the 16 floats at DX and stores them;
// ROWSTORE only stores. Both step DX to the next row of C (R8 bytes).
#define ROWADD(ya, yb) \
	VADDPS  (DX), ya, ya \
	VADDPS  32(DX), yb, yb \
	VMOVUPS ya, (DX) \
	VMOVUPS yb, 32(DX) \
	ADDQ    R8, DX

#define ROWSTORE(ya, yb) \
	VMOVUPS ya, (DX) \
	VMOVUPS yb, 32(DX) \
	ADDQ    R8, DX

// func microAVX2(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool)
TEXT ·microAVX2(SB), NOSPLIT, $0-97
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ ldb+56(FP), R11
	SHLQ $2, R11
	MOVQ c_base+64(FP), DX
	MOVQ ldc+88(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   packed_tail

packed_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	STEP6((DI), 32(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	STEP6((DI)(R11*1), 32(DI)(R11*1), 24(SI), 28(SI), 32(SI), 36(SI), 40(SI), 44(SI))
	STEP6((DI)(R11*2), 32(DI)(R11*2), 48(SI), 52(SI), 56(SI), 60(SI), 64(SI), 68(SI))
	STEP6((R12), 32(R12), 72(SI), 76(SI), 80(SI), 84(SI), 88(SI), 92(SI))
	ADDQ $96, SI
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  packed_loop4

packed_tail:
	TESTQ CX, CX
	JZ   packed_store

packed_loop1:
	STEP6((DI), 32(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ $24, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  packed_loop1

packed_store:
	MOVBQZX acc+96(FP), AX
	TESTQ AX, AX
	JZ    packed_overwrite
	ROWADD(Y0, Y1)
	ROWADD(Y2, Y3)
	ROWADD(Y4, Y5)
	ROWADD(Y6, Y7)
	ROWADD(Y8, Y9)
	ROWADD(Y10, Y11)
	VZEROUPPER
	RET

packed_overwrite:
	ROWSTORE(Y0, Y1)
	ROWSTORE(Y2, Y3)
	ROWSTORE(Y4, Y5)
	ROWSTORE(Y6, Y7)
	ROWSTORE(Y8, Y9)
	ROWSTORE(Y10, Y11)
	VZEROUPPER
	RET

// func microRowsAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)
TEXT ·microRowsAVX2(SB), NOSPLIT, $0-109
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ lda+32(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	MOVQ b_base+40(FP), DI
	MOVQ ldb+64(FP), R11
	SHLQ $2, R11
	MOVQ c_base+72(FP), DX
	MOVQ ldc+96(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   rows_tail

rows_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	STEP6((DI), 32(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	STEP6((DI)(R11*1), 32(DI)(R11*1), 4(SI), 4(SI)(R9*1), 4(SI)(R9*2), 4(R10), 4(R10)(R9*1), 4(R10)(R9*2))
	STEP6((DI)(R11*2), 32(DI)(R11*2), 8(SI), 8(SI)(R9*1), 8(SI)(R9*2), 8(R10), 8(R10)(R9*1), 8(R10)(R9*2))
	STEP6((R12), 32(R12), 12(SI), 12(SI)(R9*1), 12(SI)(R9*2), 12(R10), 12(R10)(R9*1), 12(R10)(R9*2))
	ADDQ $16, SI
	ADDQ $16, R10
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  rows_loop4

rows_tail:
	TESTQ CX, CX
	JZ   rows_store

rows_loop1:
	STEP6((DI), 32(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ R11, DI
	DECQ CX
	JNZ  rows_loop1

rows_store:
	VBROADCASTSS alpha+104(FP), Y12
	SCALE12
	MOVBQZX acc+108(FP), AX
	TESTQ AX, AX
	JZ    rows_overwrite
	ROWADD(Y0, Y1)
	ROWADD(Y2, Y3)
	ROWADD(Y4, Y5)
	ROWADD(Y6, Y7)
	ROWADD(Y8, Y9)
	ROWADD(Y10, Y11)
	VZEROUPPER
	RET

rows_overwrite:
	ROWSTORE(Y0, Y1)
	ROWSTORE(Y2, Y3)
	ROWSTORE(Y4, Y5)
	ROWSTORE(Y6, Y7)
	ROWSTORE(Y8, Y9)
	ROWSTORE(Y10, Y11)
	VZEROUPPER
	RET

// func microColsAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)
TEXT ·microColsAVX2(SB), NOSPLIT, $0-109
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ lda+32(FP), R9
	SHLQ $2, R9
	MOVQ b_base+40(FP), DI
	MOVQ ldb+64(FP), R11
	SHLQ $2, R11
	MOVQ c_base+72(FP), DX
	MOVQ ldc+96(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   cols_tail

cols_loop4:
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	STEP6((DI), 32(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	STEP6((DI)(R11*1), 32(DI)(R11*1), 0(SI)(R9*1), 4(SI)(R9*1), 8(SI)(R9*1), 12(SI)(R9*1), 16(SI)(R9*1), 20(SI)(R9*1))
	STEP6((DI)(R11*2), 32(DI)(R11*2), 0(SI)(R9*2), 4(SI)(R9*2), 8(SI)(R9*2), 12(SI)(R9*2), 16(SI)(R9*2), 20(SI)(R9*2))
	STEP6((R12), 32(R12), 0(R10), 4(R10), 8(R10), 12(R10), 16(R10), 20(R10))
	LEAQ (SI)(R9*4), SI
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  cols_loop4

cols_tail:
	TESTQ CX, CX
	JZ   cols_store

cols_loop1:
	STEP6((DI), 32(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ R9, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  cols_loop1

cols_store:
	VBROADCASTSS alpha+104(FP), Y12
	SCALE12
	MOVBQZX acc+108(FP), AX
	TESTQ AX, AX
	JZ    cols_overwrite
	ROWADD(Y0, Y1)
	ROWADD(Y2, Y3)
	ROWADD(Y4, Y5)
	ROWADD(Y6, Y7)
	ROWADD(Y8, Y9)
	ROWADD(Y10, Y11)
	VZEROUPPER
	RET

cols_overwrite:
	ROWSTORE(Y0, Y1)
	ROWSTORE(Y2, Y3)
	ROWSTORE(Y4, Y5)
	ROWSTORE(Y6, Y7)
	ROWSTORE(Y8, Y9)
	ROWSTORE(Y10, Y11)
	VZEROUPPER
	RET

// microGatherAVX2 is microGatherGo: microAVX2 with the six A values of a
// step gathered from x at the six row pointers (x + rows[i], R9 R10 R12
// R13 R14 R15) plus the step's column offset cols[p], loaded into AX or BX.
// With acc unset and a bias, the bias row is added to the tile as it is
// stored. R14 and R15 are free here: the ABI0 wrapper restores them.
// func microGatherAVX2(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool)
TEXT ·microGatherAVX2(SB), NOSPLIT, $0-169
	MOVQ    x_base+8(FP), AX
	MOVQ    rows_base+32(FP), BX
	MOVLQSX 0(BX), R9
	LEAQ    (AX)(R9*4), R9
	MOVLQSX 4(BX), R10
	LEAQ    (AX)(R10*4), R10
	MOVLQSX 8(BX), R12
	LEAQ    (AX)(R12*4), R12
	MOVLQSX 12(BX), R13
	LEAQ    (AX)(R13*4), R13
	MOVLQSX 16(BX), R14
	LEAQ    (AX)(R14*4), R14
	MOVLQSX 20(BX), R15
	LEAQ    (AX)(R15*4), R15
	MOVQ    cols_base+56(FP), SI
	MOVQ    b_base+80(FP), DI
	MOVQ    ldb+104(FP), R11
	SHLQ    $2, R11
	ZERO12
	MOVQ    k+0(FP), CX
	MOVQ    CX, DX
	SHRQ    $2, DX
	ANDQ    $3, CX
	TESTQ   DX, DX
	JZ      gather_tail

gather_loop4:
	MOVLQSX 0(SI), AX
	MOVLQSX 4(SI), BX
	STEP6((DI), 32(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	STEP6((DI)(R11*1), 32(DI)(R11*1), (R9)(BX*4), (R10)(BX*4), (R12)(BX*4), (R13)(BX*4), (R14)(BX*4), (R15)(BX*4))
	LEAQ    (DI)(R11*2), DI
	MOVLQSX 8(SI), AX
	MOVLQSX 12(SI), BX
	STEP6((DI), 32(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	STEP6((DI)(R11*1), 32(DI)(R11*1), (R9)(BX*4), (R10)(BX*4), (R12)(BX*4), (R13)(BX*4), (R14)(BX*4), (R15)(BX*4))
	LEAQ    (DI)(R11*2), DI
	ADDQ    $16, SI
	DECQ    DX
	JNZ     gather_loop4

gather_tail:
	TESTQ CX, CX
	JZ    gather_store

gather_loop1:
	MOVLQSX 0(SI), AX
	STEP6((DI), 32(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	ADDQ    $4, SI
	ADDQ    R11, DI
	DECQ    CX
	JNZ     gather_loop1

gather_store:
	MOVQ    c_base+112(FP), DX
	MOVQ    ldc+136(FP), R8
	SHLQ    $2, R8
	MOVBQZX acc+168(FP), AX
	TESTQ   AX, AX
	JNZ     gather_add
	MOVQ    bias_base+144(FP), AX
	TESTQ   AX, AX
	JZ      gather_overwrite
	VMOVUPS (AX), Y12
	VMOVUPS 32(AX), Y13
	VADDPS  Y12, Y0, Y0
	VADDPS  Y13, Y1, Y1
	VADDPS  Y12, Y2, Y2
	VADDPS  Y13, Y3, Y3
	VADDPS  Y12, Y4, Y4
	VADDPS  Y13, Y5, Y5
	VADDPS  Y12, Y6, Y6
	VADDPS  Y13, Y7, Y7
	VADDPS  Y12, Y8, Y8
	VADDPS  Y13, Y9, Y9
	VADDPS  Y12, Y10, Y10
	VADDPS  Y13, Y11, Y11

gather_overwrite:
	ROWSTORE(Y0, Y1)
	ROWSTORE(Y2, Y3)
	ROWSTORE(Y4, Y5)
	ROWSTORE(Y6, Y7)
	ROWSTORE(Y8, Y9)
	ROWSTORE(Y10, Y11)
	VZEROUPPER
	RET

gather_add:
	ROWADD(Y0, Y1)
	ROWADD(Y2, Y3)
	ROWADD(Y4, Y5)
	ROWADD(Y6, Y7)
	ROWADD(Y8, Y9)
	ROWADD(Y10, Y11)
	VZEROUPPER
	RET

// microRowsScatterAVX2 is microRowsScatterGo: microRowsAVX2 with alpha 1,
// its tile added to six rows of C at c + rows[i] (a col2im done in the
// stores). The rows are added in order, each loaded after the previous one
// is stored, so rows that overlap in C add up as they would one by one.
// func microRowsScatterAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32)
TEXT ·microRowsScatterAVX2(SB), NOSPLIT, $0-120
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ lda+32(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	MOVQ b_base+40(FP), DI
	MOVQ ldb+64(FP), R11
	SHLQ $2, R11
	ZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   scat_tail

scat_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	STEP6((DI), 32(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	STEP6((DI)(R11*1), 32(DI)(R11*1), 4(SI), 4(SI)(R9*1), 4(SI)(R9*2), 4(R10), 4(R10)(R9*1), 4(R10)(R9*2))
	STEP6((DI)(R11*2), 32(DI)(R11*2), 8(SI), 8(SI)(R9*1), 8(SI)(R9*2), 8(R10), 8(R10)(R9*1), 8(R10)(R9*2))
	STEP6((R12), 32(R12), 12(SI), 12(SI)(R9*1), 12(SI)(R9*2), 12(R10), 12(R10)(R9*1), 12(R10)(R9*2))
	ADDQ $16, SI
	ADDQ $16, R10
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  scat_loop4

scat_tail:
	TESTQ CX, CX
	JZ   scat_store

scat_loop1:
	STEP6((DI), 32(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ R11, DI
	DECQ CX
	JNZ  scat_loop1

scat_store:
	MOVQ c_base+72(FP), DX
	MOVQ rows_base+96(FP), BX
	MOVLQSX 0(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y0, Y0
	VADDPS  32(AX), Y1, Y1
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	MOVLQSX 4(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y2, Y2
	VADDPS  32(AX), Y3, Y3
	VMOVUPS Y2, (AX)
	VMOVUPS Y3, 32(AX)
	MOVLQSX 8(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y4, Y4
	VADDPS  32(AX), Y5, Y5
	VMOVUPS Y4, (AX)
	VMOVUPS Y5, 32(AX)
	MOVLQSX 12(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y6, Y6
	VADDPS  32(AX), Y7, Y7
	VMOVUPS Y6, (AX)
	VMOVUPS Y7, 32(AX)
	MOVLQSX 16(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y8, Y8
	VADDPS  32(AX), Y9, Y9
	VMOVUPS Y8, (AX)
	VMOVUPS Y9, 32(AX)
	MOVLQSX 20(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Y10, Y10
	VADDPS  32(AX), Y11, Y11
	VMOVUPS Y10, (AX)
	VMOVUPS Y11, 32(AX)
	VZEROUPPER
	RET
