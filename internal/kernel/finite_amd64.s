//go:build !noasm

#include "textflag.h"

// Four YMM loads per step (32 values): each is masked to its exponent and
// compared with the all-ones exponent; the comparisons are OR-ed and one
// VPTEST decides whether the block holds a NaN or ±Inf. The Go wrapper
// finds the culprit within the block and checks the tail.

// func nonFiniteBlockAVX2(x []float32) int
TEXT ·nonFiniteBlockAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	XORQ AX, AX
	SHRQ $5, CX
	JZ   nf_done
	MOVL $0x7f800000, DX
	MOVQ DX, X0
	VPBROADCASTD X0, Y0

nf_loop:
	VPAND    (SI), Y0, Y1
	VPAND    32(SI), Y0, Y2
	VPAND    64(SI), Y0, Y3
	VPAND    96(SI), Y0, Y4
	VPCMPEQD Y0, Y1, Y1
	VPCMPEQD Y0, Y2, Y2
	VPCMPEQD Y0, Y3, Y3
	VPCMPEQD Y0, Y4, Y4
	VPOR     Y1, Y2, Y1
	VPOR     Y3, Y4, Y3
	VPOR     Y1, Y3, Y1
	VPTEST   Y1, Y1
	JNZ      nf_found
	ADDQ     $128, SI
	ADDQ     $32, AX
	DECQ     CX
	JNZ      nf_loop

nf_found:
	VZEROUPPER

nf_done:
	MOVQ AX, ret+24(FP)
	RET
