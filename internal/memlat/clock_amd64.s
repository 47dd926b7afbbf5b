#include "textflag.h"

// func addChain(n int) int
// n iterations of 16 dependent single-cycle ADDs: 16·n core cycles. The
// loop counter is a separate dependency chain that runs alongside.
TEXT ·addChain(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	XORQ AX, AX
loop:
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	ADDQ $1, AX
	DECQ CX
	JNZ  loop
	MOVQ AX, ret+8(FP)
	RET
