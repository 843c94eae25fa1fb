//go:build !noasm

#include "textflag.h"

// As nonFiniteBlockAVX2 (finite_amd64.s): four YMM loads per step, each
// masked to its magnitude and compared, as a signed integer (every
// magnitude is below 2³¹), with the bound; one VPTEST per 32 values.

// func atLeastBlockAVX2(x []float32, gt uint32) int
TEXT ·atLeastBlockAVX2(SB), NOSPLIT, $0-40
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVL gt+24(FP), DX
	XORQ AX, AX
	SHRQ $5, CX
	JZ   al_done
	MOVQ DX, X0
	VPBROADCASTD X0, Y0
	MOVL $0x7fffffff, DX
	MOVQ DX, X5
	VPBROADCASTD X5, Y5

al_loop:
	VPAND    (SI), Y5, Y1
	VPAND    32(SI), Y5, Y2
	VPAND    64(SI), Y5, Y3
	VPAND    96(SI), Y5, Y4
	VPCMPGTD Y0, Y1, Y1
	VPCMPGTD Y0, Y2, Y2
	VPCMPGTD Y0, Y3, Y3
	VPCMPGTD Y0, Y4, Y4
	VPOR     Y1, Y2, Y1
	VPOR     Y3, Y4, Y3
	VPOR     Y1, Y3, Y1
	VPTEST   Y1, Y1
	JNZ      al_found
	ADDQ     $128, SI
	ADDQ     $32, AX
	DECQ     CX
	JNZ      al_loop

al_found:
	VZEROUPPER

al_done:
	MOVQ AX, ret+32(FP)
	RET
