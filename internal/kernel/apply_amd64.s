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

// func acc4AVX2(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool)
TEXT ·acc4AVX2(SB), NOSPLIT, $0-137
	MOVQ u_base+0(FP), DI
	MOVQ u_len+8(FP), CX
	MOVQ g0_base+24(FP), R8
	MOVQ g1_base+48(FP), R9
	MOVQ g2_base+72(FP), R10
	MOVQ g3_base+96(FP), R11
	VBROADCASTSS a0+120(FP), Y0
	VBROADCASTSS a1+124(FP), Y1
	VBROADCASTSS a2+128(FP), Y2
	VBROADCASTSS a3+132(FP), Y3
	MOVBLZX first+136(FP), DX
	XORQ AX, AX
	CMPQ CX, $0
	JLE  acc4_done

acc4_loop:
	VMULPS (R8)(AX*4), Y0, Y5
	VMULPS (R9)(AX*4), Y1, Y6
	VADDPS Y6, Y5, Y5
	VMULPS (R10)(AX*4), Y2, Y6
	VADDPS Y6, Y5, Y5
	VMULPS (R11)(AX*4), Y3, Y6
	VADDPS Y6, Y5, Y5
	TESTQ DX, DX
	JNZ  acc4_store
	VMOVUPS (DI)(AX*4), Y7
	VADDPS Y5, Y7, Y5 // u + s: u is the first operand, as in the Go loop

acc4_store:
	VMOVUPS Y5, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JL   acc4_loop

acc4_done:
	VZEROUPPER
	RET

// func momentumAVX2(w, v, u []float32, lr, mu, wd float32)
TEXT ·momentumAVX2(SB), NOSPLIT, $0-84
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ v_base+24(FP), R8
	MOVQ u_base+48(FP), R9
	VBROADCASTSS lr+72(FP), Y0
	VBROADCASTSS mu+76(FP), Y1
	VBROADCASTSS wd+80(FP), Y2
	XORQ AX, AX
	CMPQ CX, $0
	JLE  mom_done

mom_loop:
	VMOVUPS (DI)(AX*4), Y7    // w
	VMULPS  Y7, Y2, Y8        // wd·w
	VMOVUPS (R9)(AX*4), Y9    // u
	VADDPS  Y8, Y9, Y9        // u + wd·w
	VMULPS  (R8)(AX*4), Y1, Y10 // mu·v
	VADDPS  Y9, Y10, Y10      // v = mu·v + (u + wd·w)
	VMOVUPS Y10, (R8)(AX*4)
	VMULPS  Y10, Y0, Y11      // lr·v
	VSUBPS  Y11, Y7, Y7       // w − lr·v
	VMOVUPS Y7, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JL   mom_loop

mom_done:
	VZEROUPPER
	RET
