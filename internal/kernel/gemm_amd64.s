//go:build !noasm

#include "textflag.h"

// STEP is one rank-1 update of the 6×16 accumulator tile Y0–Y11 (row i in
// Y(2i), Y(2i+1)) from packed A at SI+ao (6 floats) and packed B at DI+bo
// (16 floats). Two broadcast registers alternate so consecutive rows do not
// wait on each other.
#define STEP(ao, bo) \
	VMOVUPS      bo(DI), Y12 \
	VMOVUPS      bo+32(DI), Y13 \
	VBROADCASTSS ao(SI), Y14 \
	VFMADD231PS  Y12, Y14, Y0 \
	VFMADD231PS  Y13, Y14, Y1 \
	VBROADCASTSS ao+4(SI), Y15 \
	VFMADD231PS  Y12, Y15, Y2 \
	VFMADD231PS  Y13, Y15, Y3 \
	VBROADCASTSS ao+8(SI), Y14 \
	VFMADD231PS  Y12, Y14, Y4 \
	VFMADD231PS  Y13, Y14, Y5 \
	VBROADCASTSS ao+12(SI), Y15 \
	VFMADD231PS  Y12, Y15, Y6 \
	VFMADD231PS  Y13, Y15, Y7 \
	VBROADCASTSS ao+16(SI), Y14 \
	VFMADD231PS  Y12, Y14, Y8 \
	VFMADD231PS  Y13, Y14, Y9 \
	VBROADCASTSS ao+20(SI), Y15 \
	VFMADD231PS  Y12, Y15, Y10 \
	VFMADD231PS  Y13, Y15, Y11

// ROWADD adds accumulators ya, yb to the 16 floats at DX and stores them.
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

// func microAVX2(k int, a, b, c []float32, ldc int, acc bool)
TEXT ·microAVX2(SB), NOSPLIT, $0-89
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   micro_tail

micro_loop4:
	STEP(0, 0)
	STEP(24, 64)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  micro_loop4

micro_tail:
	TESTQ CX, CX
	JZ   micro_store

micro_loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  micro_loop1

micro_store:
	MOVBQZX acc+88(FP), AX
	TESTQ AX, AX
	JZ   micro_overwrite
	ROWADD(Y0, Y1)
	ROWADD(Y2, Y3)
	ROWADD(Y4, Y5)
	ROWADD(Y6, Y7)
	ROWADD(Y8, Y9)
	ROWADD(Y10, Y11)
	VZEROUPPER
	RET

micro_overwrite:
	ROWSTORE(Y0, Y1)
	ROWSTORE(Y2, Y3)
	ROWSTORE(Y4, Y5)
	ROWSTORE(Y6, Y7)
	ROWSTORE(Y8, Y9)
	ROWSTORE(Y10, Y11)
	VZEROUPPER
	RET
