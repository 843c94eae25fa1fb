//go:build !noasm

#include "textflag.h"

// The SGD apply's kernels with AVX2, 8 floats a step, no FMA (apply.go
// says why). The callers pass lengths that are multiples of 8.

// ARGS4 loads the four gradients' addresses into R8–R11 and broadcasts
// their four weights into Y0–Y3 (sub4 and acc4 take the same arguments
// after their first slice).
#define ARGS4(p0, p1, p2, p3, c0, c1, c2, c3) \
	MOVQ         p0, R8 \
	MOVQ         p1, R9 \
	MOVQ         p2, R10 \
	MOVQ         p3, R11 \
	VBROADCASTSS c0, Y0 \
	VBROADCASTSS c1, Y1 \
	VBROADCASTSS c2, Y2 \
	VBROADCASTSS c3, Y3

// WSUM4 leaves the weighted sum of the four gradients' 8 floats at AX in
// Y5, left to right with every product and sum rounded, as the Go loop
// adds them; Y6 is scratch.
#define WSUM4 \
	VMULPS (R8)(AX*4), Y0, Y5 \
	VMULPS (R9)(AX*4), Y1, Y6 \
	VADDPS Y6, Y5, Y5 \
	VMULPS (R10)(AX*4), Y2, Y6 \
	VADDPS Y6, Y5, Y5 \
	VMULPS (R11)(AX*4), Y3, Y6 \
	VADDPS Y6, Y5, Y5

// func sub4AVX2(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32)
TEXT ·sub4AVX2(SB), NOSPLIT, $0-140
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	ARGS4(g0_base+24(FP), g1_base+48(FP), g2_base+72(FP), g3_base+96(FP), b0+120(FP), b1+124(FP), b2+128(FP), b3+132(FP))
	VBROADCASTSS d+136(FP), Y4
	XORQ AX, AX
	CMPQ CX, $0
	JLE  sub4_done

sub4_loop:
	WSUM4
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
	ARGS4(g0_base+24(FP), g1_base+48(FP), g2_base+72(FP), g3_base+96(FP), a0+120(FP), a1+124(FP), a2+128(FP), a3+132(FP))
	MOVBLZX first+136(FP), DX
	XORQ AX, AX
	CMPQ CX, $0
	JLE  acc4_done

acc4_loop:
	WSUM4
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
