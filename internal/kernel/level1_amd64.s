//go:build !noasm

#include "textflag.h"

// Level-1 kernels with AVX2/FMA: 32 floats per iteration in four independent
// registers, then 8 at a time, then scalar. Loads and stores are unaligned.

// func axpyAVX2(alpha float32, x, y []float32)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ x_len+16(FP), CX
	MOVQ y_base+32(FP), DI
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ   axpy_tail8

axpy_loop32:
	VMOVUPS (SI)(AX*4), Y1
	VMOVUPS 32(SI)(AX*4), Y2
	VMOVUPS 64(SI)(AX*4), Y3
	VMOVUPS 96(SI)(AX*4), Y4
	VFMADD213PS (DI)(AX*4), Y0, Y1
	VFMADD213PS 32(DI)(AX*4), Y0, Y2
	VFMADD213PS 64(DI)(AX*4), Y0, Y3
	VFMADD213PS 96(DI)(AX*4), Y0, Y4
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	VMOVUPS Y3, 64(DI)(AX*4)
	VMOVUPS Y4, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, BX
	JL   axpy_loop32

axpy_tail8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE  axpy_tail1

axpy_loop8:
	VMOVUPS (SI)(AX*4), Y1
	VFMADD213PS (DI)(AX*4), Y0, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL   axpy_loop8

axpy_tail1:
	CMPQ AX, CX
	JGE  axpy_done

axpy_loop1:
	VMOVSS (SI)(AX*4), X1
	VFMADD213SS (DI)(AX*4), X0, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JL   axpy_loop1

axpy_done:
	VZEROUPPER
	RET

// func scalAVX2(alpha float32, x []float32)
TEXT ·scalAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x_base+8(FP), DI
	MOVQ x_len+16(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ   scal_tail8

scal_loop32:
	VMULPS (DI)(AX*4), Y0, Y1
	VMULPS 32(DI)(AX*4), Y0, Y2
	VMULPS 64(DI)(AX*4), Y0, Y3
	VMULPS 96(DI)(AX*4), Y0, Y4
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	VMOVUPS Y3, 64(DI)(AX*4)
	VMOVUPS Y4, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, BX
	JL   scal_loop32

scal_tail8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE  scal_tail1

scal_loop8:
	VMULPS (DI)(AX*4), Y0, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL   scal_loop8

scal_tail1:
	CMPQ AX, CX
	JGE  scal_done

scal_loop1:
	VMULSS (DI)(AX*4), X0, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JL   scal_loop1

scal_done:
	VZEROUPPER
	RET

// HSUM leaves the sum of the eight lanes of Y0 in the low lane of X0.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0

// func sumAVX2(x []float32) float32
TEXT ·sumAVX2(SB), NOSPLIT, $0-28
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ   sum_tail8

sum_loop32:
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VADDPS 64(SI)(AX*4), Y2, Y2
	VADDPS 96(SI)(AX*4), Y3, Y3
	ADDQ $32, AX
	CMPQ AX, BX
	JL   sum_loop32

sum_tail8:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE  sum_reduce

sum_loop8:
	VADDPS (SI)(AX*4), Y0, Y0
	ADDQ $8, AX
	CMPQ AX, BX
	JL   sum_loop8

sum_reduce:
	HSUM
	CMPQ AX, CX
	JGE  sum_done

sum_loop1:
	VADDSS (SI)(AX*4), X0, X0
	INCQ AX
	CMPQ AX, CX
	JL   sum_loop1

sum_done:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dotAVX2(x, y []float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ   dot_tail8

dot_loop32:
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMOVUPS 64(SI)(AX*4), Y6
	VMOVUPS 96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ $32, AX
	CMPQ AX, BX
	JL   dot_loop32

dot_tail8:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE  dot_reduce

dot_loop8:
	VMOVUPS (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ $8, AX
	CMPQ AX, BX
	JL   dot_loop8

dot_reduce:
	HSUM
	CMPQ AX, CX
	JGE  dot_done

dot_loop1:
	VMOVSS (SI)(AX*4), X4
	VFMADD231SS (DI)(AX*4), X4, X0
	INCQ AX
	CMPQ AX, CX
	JL   dot_loop1

dot_done:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET
