//go:build !noasm

#include "textflag.h"

// ReLU with AVX, 8 values at a time; the Go wrapper handles the tail.
// Backward is branch-free: a y > 0 mask ANDed with dy, where the Go loop
// mispredicts on every sign change of the activations.

// func reluAVX2(dst, x []float32)
TEXT ·reluAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	SHRQ $3, CX
	JZ   relu_done
	VXORPS Y0, Y0, Y0

relu_loop:
	VMAXPS  (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     relu_loop
	VZEROUPPER

relu_done:
	RET

// func reluBackwardAVX2(dx, y, dy []float32)
TEXT ·reluBackwardAVX2(SB), NOSPLIT, $0-72
	MOVQ dx_base+0(FP), DI
	MOVQ y_base+24(FP), SI
	MOVQ y_len+32(FP), CX
	MOVQ dy_base+48(FP), DX
	SHRQ $3, CX
	JZ   back_done
	VXORPS Y0, Y0, Y0

back_loop:
	VMOVUPS (SI), Y1
	VCMPPS  $14, Y0, Y1, Y2 // y > 0
	VANDPS  (DX), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     back_loop
	VZEROUPPER

back_done:
	RET
