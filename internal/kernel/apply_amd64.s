//go:build !noasm

#include "textflag.h"

// The SGD apply's kernels with AVX2, 8 floats a step, no FMA (apply.go
// says why). The callers pass lengths that are multiples of 8.

// func sub4AVX2(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32)
TEXT ·sub4AVX2(SB), NOSPLIT, $0-140
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ g0_base+24(FP), R8
	MOVQ g1_base+48(FP), R9
	MOVQ g2_base+72(FP), R10
	MOVQ g3_base+96(FP), R11
	VBROADCASTSS b0+120(FP), Y0
	VBROADCASTSS b1+124(FP), Y1
	VBROADCASTSS b2+128(FP), Y2
	VBROADCASTSS b3+132(FP), Y3
	VBROADCASTSS d+136(FP), Y4
	XORQ AX, AX
	CMPQ CX, $0
	JLE  sub4_done

sub4_loop:
	VMULPS (R8)(AX*4), Y0, Y5
	VMULPS (R9)(AX*4), Y1, Y6
	VADDPS Y6, Y5, Y5
	VMULPS (R10)(AX*4), Y2, Y6
	VADDPS Y6, Y5, Y5
	VMULPS (R11)(AX*4), Y3, Y6
	VADDPS Y6, Y5, Y5
	VMULPS (DI)(AX*4), Y4, Y7
	VSUBPS Y5, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JL   sub4_loop

sub4_done:
	VZEROUPPER
	RET

// func sub1AVX2(w, g []float32, b, d float32)
TEXT ·sub1AVX2(SB), NOSPLIT, $0-56
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ g_base+24(FP), R8
	VBROADCASTSS b+48(FP), Y0
	VBROADCASTSS d+52(FP), Y4
	XORQ AX, AX
	CMPQ CX, $0
	JLE  sub1_done

sub1_loop:
	VMULPS (R8)(AX*4), Y0, Y5
	VMULPS (DI)(AX*4), Y4, Y7
	VSUBPS Y5, Y7, Y7
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JL   sub1_loop

sub1_done:
	VZEROUPPER
	RET
