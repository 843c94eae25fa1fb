//go:build !noasm

#include "textflag.h"

// Pooling with AVX: 8 channels at a time; the Go wrapper only calls these
// when c is a multiple of 8. SI, DI walk the two input rows, R10/R11 hold
// the byte offset of the right-hand pixel (c·4).

// func maxPool2RowAVX2(dst, r0, r1 []float32, ow, c int)
TEXT ·maxPool2RowAVX2(SB), NOSPLIT, $0-88
	MOVQ dst_base+0(FP), DX
	MOVQ r0_base+24(FP), SI
	MOVQ r1_base+48(FP), DI
	MOVQ ow+72(FP), CX
	MOVQ c+80(FP), R10
	SHLQ $2, R10

pool_pixel:
	XORQ AX, AX

pool_chan:
	MOVQ AX, BX
	ADDQ R10, BX
	VMOVUPS (SI)(AX*1), Y0
	VMAXPS  (SI)(BX*1), Y0, Y0
	VMAXPS  (DI)(AX*1), Y0, Y0
	VMAXPS  (DI)(BX*1), Y0, Y0
	VMOVUPS Y0, (DX)(AX*1)
	ADDQ $32, AX
	CMPQ AX, R10
	JL   pool_chan
	LEAQ (SI)(R10*2), SI
	LEAQ (DI)(R10*2), DI
	ADDQ R10, DX
	DECQ CX
	JNZ  pool_pixel
	VZEROUPPER
	RET

// func maxPool2RowBackwardAVX2(dx0, dx1, r0, r1, y, dy []float32, ow, c int)
TEXT ·maxPool2RowBackwardAVX2(SB), NOSPLIT, $0-160
	MOVQ dx0_base+0(FP), R12
	MOVQ dx1_base+24(FP), R13
	MOVQ r0_base+48(FP), SI
	MOVQ r1_base+72(FP), DI
	MOVQ y_base+96(FP), R8
	MOVQ dy_base+120(FP), R9
	MOVQ ow+144(FP), CX
	MOVQ c+152(FP), R10
	SHLQ $2, R10

back_pixel:
	XORQ AX, AX

back_chan:
	MOVQ AX, BX
	ADDQ R10, BX
	VMOVUPS (R8)(AX*1), Y4 // y
	VMOVUPS (R9)(AX*1), Y5 // dy
	// Y8 accumulates the lanes already given their gradient.
	VCMPPS  $0, (SI)(AX*1), Y4, Y8
	VANDPS  Y5, Y8, Y7
	VMOVUPS Y7, (R12)(AX*1)
	VCMPPS  $0, (SI)(BX*1), Y4, Y6
	VANDNPS Y6, Y8, Y9
	VANDPS  Y5, Y9, Y7
	VMOVUPS Y7, (R12)(BX*1)
	VORPS   Y9, Y8, Y8
	VCMPPS  $0, (DI)(AX*1), Y4, Y6
	VANDNPS Y6, Y8, Y9
	VANDPS  Y5, Y9, Y7
	VMOVUPS Y7, (R13)(AX*1)
	VORPS   Y9, Y8, Y8
	VCMPPS  $0, (DI)(BX*1), Y4, Y6
	VANDNPS Y6, Y8, Y9
	VANDPS  Y5, Y9, Y7
	VMOVUPS Y7, (R13)(BX*1)
	ADDQ $32, AX
	CMPQ AX, R10
	JL   back_chan
	LEAQ (SI)(R10*2), SI
	LEAQ (DI)(R10*2), DI
	LEAQ (R12)(R10*2), R12
	LEAQ (R13)(R10*2), R13
	ADDQ R10, R8
	ADDQ R10, R9
	DECQ CX
	JNZ  back_pixel
	VZEROUPPER
	RET
