//go:build !noasm

#include "textflag.h"

// The 6×32 AVX-512 micro-kernels: gemm_amd64.s's 6×16 ones with 16-wide ZMM
// registers, so each k step is two loads of B (32 floats), six broadcasts of
// A and twelve 512-bit FMAs. Each element of C is still one lane summed
// over k in order with FMA, as in the AVX2 kernels, so the two paths give
// the same bits for the same blocking (kc does not depend on nr). Only
// AVX512F instructions are used (VPXORD, not the DQ VXORPS, to clear).

// ZSTEP6 is one rank-1 update; b0, b1 address the two halves of the B row,
// m0–m5 the six A values.
#define ZSTEP6(b0, b1, m0, m1, m2, m3, m4, m5) \
	VMOVUPS      b0, Z12 \
	VMOVUPS      b1, Z13 \
	VBROADCASTSS m0, Z14 \
	VFMADD231PS  Z12, Z14, Z0 \
	VFMADD231PS  Z13, Z14, Z1 \
	VBROADCASTSS m1, Z15 \
	VFMADD231PS  Z12, Z15, Z2 \
	VFMADD231PS  Z13, Z15, Z3 \
	VBROADCASTSS m2, Z14 \
	VFMADD231PS  Z12, Z14, Z4 \
	VFMADD231PS  Z13, Z14, Z5 \
	VBROADCASTSS m3, Z15 \
	VFMADD231PS  Z12, Z15, Z6 \
	VFMADD231PS  Z13, Z15, Z7 \
	VBROADCASTSS m4, Z14 \
	VFMADD231PS  Z12, Z14, Z8 \
	VFMADD231PS  Z13, Z14, Z9 \
	VBROADCASTSS m5, Z15 \
	VFMADD231PS  Z12, Z15, Z10 \
	VFMADD231PS  Z13, Z15, Z11

#define ZZERO12 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11

// ZSCALE12 multiplies the tile by Z12.
#define ZSCALE12 \
	VMULPS Z12, Z0, Z0 \
	VMULPS Z12, Z1, Z1 \
	VMULPS Z12, Z2, Z2 \
	VMULPS Z12, Z3, Z3 \
	VMULPS Z12, Z4, Z4 \
	VMULPS Z12, Z5, Z5 \
	VMULPS Z12, Z6, Z6 \
	VMULPS Z12, Z7, Z7 \
	VMULPS Z12, Z8, Z8 \
	VMULPS Z12, Z9, Z9 \
	VMULPS Z12, Z10, Z10 \
	VMULPS Z12, Z11, Z11

// ZROWADD adds accumulators ya, yb to the 32 floats at DX and stores them;
// ZROWSTORE only stores. Both step DX to the next row of C (R8 bytes).
#define ZROWADD(ya, yb) \
	VADDPS  (DX), ya, ya \
	VADDPS  64(DX), yb, yb \
	VMOVUPS ya, (DX) \
	VMOVUPS yb, 64(DX) \
	ADDQ    R8, DX

#define ZROWSTORE(ya, yb) \
	VMOVUPS ya, (DX) \
	VMOVUPS yb, 64(DX) \
	ADDQ    R8, DX

// func microAVX512(k int, a, b []float32, ldb int, c []float32, ldc int, acc bool)
TEXT ·microAVX512(SB), NOSPLIT, $0-97
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ ldb+56(FP), R11
	SHLQ $2, R11
	MOVQ c_base+64(FP), DX
	MOVQ ldc+88(FP), R8
	SHLQ $2, R8
	ZZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   zpacked_tail

zpacked_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	ZSTEP6((DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), 24(SI), 28(SI), 32(SI), 36(SI), 40(SI), 44(SI))
	ZSTEP6((DI)(R11*2), 64(DI)(R11*2), 48(SI), 52(SI), 56(SI), 60(SI), 64(SI), 68(SI))
	ZSTEP6((R12), 64(R12), 72(SI), 76(SI), 80(SI), 84(SI), 88(SI), 92(SI))
	ADDQ $96, SI
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  zpacked_loop4

zpacked_tail:
	TESTQ CX, CX
	JZ   zpacked_store

zpacked_loop1:
	ZSTEP6((DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ $24, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  zpacked_loop1

zpacked_store:
	MOVBQZX acc+96(FP), AX
	TESTQ AX, AX
	JZ    zpacked_overwrite
	ZROWADD(Z0, Z1)
	ZROWADD(Z2, Z3)
	ZROWADD(Z4, Z5)
	ZROWADD(Z6, Z7)
	ZROWADD(Z8, Z9)
	ZROWADD(Z10, Z11)
	VZEROUPPER
	RET

zpacked_overwrite:
	ZROWSTORE(Z0, Z1)
	ZROWSTORE(Z2, Z3)
	ZROWSTORE(Z4, Z5)
	ZROWSTORE(Z6, Z7)
	ZROWSTORE(Z8, Z9)
	ZROWSTORE(Z10, Z11)
	VZEROUPPER
	RET

// func microRowsAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)
TEXT ·microRowsAVX512(SB), NOSPLIT, $0-109
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
	ZZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   zrows_tail

zrows_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	ZSTEP6((DI), 64(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), 4(SI), 4(SI)(R9*1), 4(SI)(R9*2), 4(R10), 4(R10)(R9*1), 4(R10)(R9*2))
	ZSTEP6((DI)(R11*2), 64(DI)(R11*2), 8(SI), 8(SI)(R9*1), 8(SI)(R9*2), 8(R10), 8(R10)(R9*1), 8(R10)(R9*2))
	ZSTEP6((R12), 64(R12), 12(SI), 12(SI)(R9*1), 12(SI)(R9*2), 12(R10), 12(R10)(R9*1), 12(R10)(R9*2))
	ADDQ $16, SI
	ADDQ $16, R10
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  zrows_loop4

zrows_tail:
	TESTQ CX, CX
	JZ   zrows_store

zrows_loop1:
	ZSTEP6((DI), 64(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ R11, DI
	DECQ CX
	JNZ  zrows_loop1

zrows_store:
	VBROADCASTSS alpha+104(FP), Z12
	ZSCALE12
	MOVBQZX acc+108(FP), AX
	TESTQ AX, AX
	JZ    zrows_overwrite
	ZROWADD(Z0, Z1)
	ZROWADD(Z2, Z3)
	ZROWADD(Z4, Z5)
	ZROWADD(Z6, Z7)
	ZROWADD(Z8, Z9)
	ZROWADD(Z10, Z11)
	VZEROUPPER
	RET

zrows_overwrite:
	ZROWSTORE(Z0, Z1)
	ZROWSTORE(Z2, Z3)
	ZROWSTORE(Z4, Z5)
	ZROWSTORE(Z6, Z7)
	ZROWSTORE(Z8, Z9)
	ZROWSTORE(Z10, Z11)
	VZEROUPPER
	RET

// func microColsAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha float32, acc bool)
TEXT ·microColsAVX512(SB), NOSPLIT, $0-109
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
	ZZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   zcols_tail

zcols_loop4:
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	ZSTEP6((DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), 0(SI)(R9*1), 4(SI)(R9*1), 8(SI)(R9*1), 12(SI)(R9*1), 16(SI)(R9*1), 20(SI)(R9*1))
	ZSTEP6((DI)(R11*2), 64(DI)(R11*2), 0(SI)(R9*2), 4(SI)(R9*2), 8(SI)(R9*2), 12(SI)(R9*2), 16(SI)(R9*2), 20(SI)(R9*2))
	ZSTEP6((R12), 64(R12), 0(R10), 4(R10), 8(R10), 12(R10), 16(R10), 20(R10))
	LEAQ (SI)(R9*4), SI
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  zcols_loop4

zcols_tail:
	TESTQ CX, CX
	JZ   zcols_store

zcols_loop1:
	ZSTEP6((DI), 64(DI), 0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI))
	ADDQ R9, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  zcols_loop1

zcols_store:
	VBROADCASTSS alpha+104(FP), Z12
	ZSCALE12
	MOVBQZX acc+108(FP), AX
	TESTQ AX, AX
	JZ    zcols_overwrite
	ZROWADD(Z0, Z1)
	ZROWADD(Z2, Z3)
	ZROWADD(Z4, Z5)
	ZROWADD(Z6, Z7)
	ZROWADD(Z8, Z9)
	ZROWADD(Z10, Z11)
	VZEROUPPER
	RET

zcols_overwrite:
	ZROWSTORE(Z0, Z1)
	ZROWSTORE(Z2, Z3)
	ZROWSTORE(Z4, Z5)
	ZROWSTORE(Z6, Z7)
	ZROWSTORE(Z8, Z9)
	ZROWSTORE(Z10, Z11)
	VZEROUPPER
	RET

// microGatherAVX512 is microGatherAVX2 with the 6×32 tile.
// func microGatherAVX512(k int, x []float32, rows, cols []int32, b []float32, ldb int, c []float32, ldc int, bias []float32, acc bool)
TEXT ·microGatherAVX512(SB), NOSPLIT, $0-169
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
	ZZERO12
	MOVQ    k+0(FP), CX
	MOVQ    CX, DX
	SHRQ    $2, DX
	ANDQ    $3, CX
	TESTQ   DX, DX
	JZ      zgather_tail

zgather_loop4:
	MOVLQSX 0(SI), AX
	MOVLQSX 4(SI), BX
	ZSTEP6((DI), 64(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), (R9)(BX*4), (R10)(BX*4), (R12)(BX*4), (R13)(BX*4), (R14)(BX*4), (R15)(BX*4))
	LEAQ    (DI)(R11*2), DI
	MOVLQSX 8(SI), AX
	MOVLQSX 12(SI), BX
	ZSTEP6((DI), 64(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), (R9)(BX*4), (R10)(BX*4), (R12)(BX*4), (R13)(BX*4), (R14)(BX*4), (R15)(BX*4))
	LEAQ    (DI)(R11*2), DI
	ADDQ    $16, SI
	DECQ    DX
	JNZ     zgather_loop4

zgather_tail:
	TESTQ CX, CX
	JZ    zgather_store

zgather_loop1:
	MOVLQSX 0(SI), AX
	ZSTEP6((DI), 64(DI), (R9)(AX*4), (R10)(AX*4), (R12)(AX*4), (R13)(AX*4), (R14)(AX*4), (R15)(AX*4))
	ADDQ    $4, SI
	ADDQ    R11, DI
	DECQ    CX
	JNZ     zgather_loop1

zgather_store:
	MOVQ    c_base+112(FP), DX
	MOVQ    ldc+136(FP), R8
	SHLQ    $2, R8
	MOVBQZX acc+168(FP), AX
	TESTQ   AX, AX
	JNZ     zgather_add
	MOVQ    bias_base+144(FP), AX
	TESTQ   AX, AX
	JZ      zgather_overwrite
	VMOVUPS (AX), Z12
	VMOVUPS 64(AX), Z13
	VADDPS  Z12, Z0, Z0
	VADDPS  Z13, Z1, Z1
	VADDPS  Z12, Z2, Z2
	VADDPS  Z13, Z3, Z3
	VADDPS  Z12, Z4, Z4
	VADDPS  Z13, Z5, Z5
	VADDPS  Z12, Z6, Z6
	VADDPS  Z13, Z7, Z7
	VADDPS  Z12, Z8, Z8
	VADDPS  Z13, Z9, Z9
	VADDPS  Z12, Z10, Z10
	VADDPS  Z13, Z11, Z11

zgather_overwrite:
	ZROWSTORE(Z0, Z1)
	ZROWSTORE(Z2, Z3)
	ZROWSTORE(Z4, Z5)
	ZROWSTORE(Z6, Z7)
	ZROWSTORE(Z8, Z9)
	ZROWSTORE(Z10, Z11)
	VZEROUPPER
	RET

zgather_add:
	ZROWADD(Z0, Z1)
	ZROWADD(Z2, Z3)
	ZROWADD(Z4, Z5)
	ZROWADD(Z6, Z7)
	ZROWADD(Z8, Z9)
	ZROWADD(Z10, Z11)
	VZEROUPPER
	RET

// microRowsScatterAVX512 is microRowsScatterAVX2 with the 6×32 tile.
// func microRowsScatterAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, rows []int32)
TEXT ·microRowsScatterAVX512(SB), NOSPLIT, $0-120
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ lda+32(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	MOVQ b_base+40(FP), DI
	MOVQ ldb+64(FP), R11
	SHLQ $2, R11
	ZZERO12
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   zscat_tail

zscat_loop4:
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12
	ZSTEP6((DI), 64(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ZSTEP6((DI)(R11*1), 64(DI)(R11*1), 4(SI), 4(SI)(R9*1), 4(SI)(R9*2), 4(R10), 4(R10)(R9*1), 4(R10)(R9*2))
	ZSTEP6((DI)(R11*2), 64(DI)(R11*2), 8(SI), 8(SI)(R9*1), 8(SI)(R9*2), 8(R10), 8(R10)(R9*1), 8(R10)(R9*2))
	ZSTEP6((R12), 64(R12), 12(SI), 12(SI)(R9*1), 12(SI)(R9*2), 12(R10), 12(R10)(R9*1), 12(R10)(R9*2))
	ADDQ $16, SI
	ADDQ $16, R10
	LEAQ (DI)(R11*4), DI
	DECQ BX
	JNZ  zscat_loop4

zscat_tail:
	TESTQ CX, CX
	JZ   zscat_store

zscat_loop1:
	ZSTEP6((DI), 64(DI), 0(SI), 0(SI)(R9*1), 0(SI)(R9*2), 0(R10), 0(R10)(R9*1), 0(R10)(R9*2))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ R11, DI
	DECQ CX
	JNZ  zscat_loop1

zscat_store:
	MOVQ c_base+72(FP), DX
	MOVQ rows_base+96(FP), BX
	MOVLQSX 0(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z0, Z0
	VADDPS  64(AX), Z1, Z1
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	MOVLQSX 4(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z2, Z2
	VADDPS  64(AX), Z3, Z3
	VMOVUPS Z2, (AX)
	VMOVUPS Z3, 64(AX)
	MOVLQSX 8(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z4, Z4
	VADDPS  64(AX), Z5, Z5
	VMOVUPS Z4, (AX)
	VMOVUPS Z5, 64(AX)
	MOVLQSX 12(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z6, Z6
	VADDPS  64(AX), Z7, Z7
	VMOVUPS Z6, (AX)
	VMOVUPS Z7, 64(AX)
	MOVLQSX 16(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z8, Z8
	VADDPS  64(AX), Z9, Z9
	VMOVUPS Z8, (AX)
	VMOVUPS Z9, 64(AX)
	MOVLQSX 20(BX), AX
	LEAQ    (DX)(AX*4), AX
	VADDPS  (AX), Z10, Z10
	VADDPS  64(AX), Z11, Z11
	VMOVUPS Z10, (AX)
	VMOVUPS Z11, 64(AX)
	VZEROUPPER
	RET
