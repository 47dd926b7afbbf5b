#include "textflag.h"

// Bandwidth kernels: sequential loads, non-temporal stores, copy and
// STREAM triad, 256 bytes per iteration with the widest registers the CPU
// has. Every pointer is 64-byte aligned and every n a positive multiple of
// 256 bytes (the callers' chunks are). write stores the 8-byte v
// everywhere: the memory behind this guest writes zeros (all of a line)
// half again as fast as other data, so the probe never stores zeros.

// func readAVX512(p unsafe.Pointer, n int)
TEXT ·readAVX512(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $8, CX
read512:
	VMOVDQA64 0(SI), Z0
	VMOVDQA64 64(SI), Z1
	VMOVDQA64 128(SI), Z2
	VMOVDQA64 192(SI), Z3
	ADDQ      $256, SI
	DECQ      CX
	JNZ       read512
	VZEROUPPER
	RET

// func writeAVX512(p unsafe.Pointer, n int, v uint64)
TEXT ·writeAVX512(SB), NOSPLIT, $0-24
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	SHRQ         $8, CX
	VPBROADCASTQ v+16(FP), Z0
write512:
	VMOVNTDQ Z0, 0(DI)
	VMOVNTDQ Z0, 64(DI)
	VMOVNTDQ Z0, 128(DI)
	VMOVNTDQ Z0, 192(DI)
	ADDQ     $256, DI
	DECQ     CX
	JNZ      write512
	SFENCE
	VZEROUPPER
	RET

// func copyAVX512(dst, src unsafe.Pointer, n int)
// Each store follows its load. Four loads and then four stores, the
// order of the other copies, moved 9-12% less here (AMD EPYC family 26,
// one thread, 12 of 12 paired 300 ms windows on each CPU, 51 -> 56 GB/s),
// and a C loop in that order as little; gcc's order for the same C,
// and this one, run as fast as likwid-bench's copy_mem_avx512.
TEXT ·copyAVX512(SB), NOSPLIT, $0-24
	MOVQ      dst+0(FP), DI
	MOVQ      src+8(FP), SI
	MOVQ      n+16(FP), CX
	SHRQ      $8, CX
copy512:
	VMOVDQA64 0(SI), Z0
	VMOVNTDQ  Z0, 0(DI)
	VMOVDQA64 64(SI), Z1
	VMOVNTDQ  Z1, 64(DI)
	VMOVDQA64 128(SI), Z2
	VMOVNTDQ  Z2, 128(DI)
	VMOVDQA64 192(SI), Z3
	VMOVNTDQ  Z3, 192(DI)
	ADDQ      $256, SI
	ADDQ      $256, DI
	DECQ      CX
	JNZ       copy512
	SFENCE
	VZEROUPPER
	RET

// func triadAVX512(a, b, c unsafe.Pointer, s float64, n int)
// a[i] = b[i] + s·c[i] over n bytes of float64s.
TEXT ·triadAVX512(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         c+16(FP), DX
	VBROADCASTSD s+24(FP), Z8
	MOVQ         n+32(FP), CX
	SHRQ         $8, CX
triad512:
	VMULPD       0(DX), Z8, Z0
	VMULPD       64(DX), Z8, Z1
	VMULPD       128(DX), Z8, Z2
	VMULPD       192(DX), Z8, Z3
	VADDPD       0(SI), Z0, Z0
	VADDPD       64(SI), Z1, Z1
	VADDPD       128(SI), Z2, Z2
	VADDPD       192(SI), Z3, Z3
	VMOVNTPD     Z0, 0(DI)
	VMOVNTPD     Z1, 64(DI)
	VMOVNTPD     Z2, 128(DI)
	VMOVNTPD     Z3, 192(DI)
	ADDQ         $256, SI
	ADDQ         $256, DX
	ADDQ         $256, DI
	DECQ         CX
	JNZ          triad512
	SFENCE
	VZEROUPPER
	RET

// func readAVX2(p unsafe.Pointer, n int)
TEXT ·readAVX2(SB), NOSPLIT, $0-16
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	SHRQ    $8, CX
read256:
	VMOVDQA 0(SI), Y0
	VMOVDQA 32(SI), Y1
	VMOVDQA 64(SI), Y2
	VMOVDQA 96(SI), Y3
	VMOVDQA 128(SI), Y4
	VMOVDQA 160(SI), Y5
	VMOVDQA 192(SI), Y6
	VMOVDQA 224(SI), Y7
	ADDQ    $256, SI
	DECQ    CX
	JNZ     read256
	VZEROUPPER
	RET

// func writeAVX2(p unsafe.Pointer, n int, v uint64)
TEXT ·writeAVX2(SB), NOSPLIT, $0-24
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	SHRQ         $8, CX
	VPBROADCASTQ v+16(FP), Y0
write256:
	VMOVNTDQ Y0, 0(DI)
	VMOVNTDQ Y0, 32(DI)
	VMOVNTDQ Y0, 64(DI)
	VMOVNTDQ Y0, 96(DI)
	VMOVNTDQ Y0, 128(DI)
	VMOVNTDQ Y0, 160(DI)
	VMOVNTDQ Y0, 192(DI)
	VMOVNTDQ Y0, 224(DI)
	ADDQ     $256, DI
	DECQ     CX
	JNZ      write256
	SFENCE
	VZEROUPPER
	RET

// func copyAVX2(dst, src unsafe.Pointer, n int)
// Eight loads, then eight stores: each store after its load read the
// same here (paired 300 ms windows, 12 a CPU: 1.007 and 0.995, 57 GB/s).
TEXT ·copyAVX2(SB), NOSPLIT, $0-24
	MOVQ     dst+0(FP), DI
	MOVQ     src+8(FP), SI
	MOVQ     n+16(FP), CX
	SHRQ     $8, CX
copy256:
	VMOVDQA  0(SI), Y0
	VMOVDQA  32(SI), Y1
	VMOVDQA  64(SI), Y2
	VMOVDQA  96(SI), Y3
	VMOVDQA  128(SI), Y4
	VMOVDQA  160(SI), Y5
	VMOVDQA  192(SI), Y6
	VMOVDQA  224(SI), Y7
	VMOVNTDQ Y0, 0(DI)
	VMOVNTDQ Y1, 32(DI)
	VMOVNTDQ Y2, 64(DI)
	VMOVNTDQ Y3, 96(DI)
	VMOVNTDQ Y4, 128(DI)
	VMOVNTDQ Y5, 160(DI)
	VMOVNTDQ Y6, 192(DI)
	VMOVNTDQ Y7, 224(DI)
	ADDQ     $256, SI
	ADDQ     $256, DI
	DECQ     CX
	JNZ      copy256
	SFENCE
	VZEROUPPER
	RET

// func triadAVX2(a, b, c unsafe.Pointer, s float64, n int)
TEXT ·triadAVX2(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         c+16(FP), DX
	VBROADCASTSD s+24(FP), Y8
	MOVQ         n+32(FP), CX
	SHRQ         $7, CX
triad256:
	VMULPD       0(DX), Y8, Y0
	VMULPD       32(DX), Y8, Y1
	VMULPD       64(DX), Y8, Y2
	VMULPD       96(DX), Y8, Y3
	VADDPD       0(SI), Y0, Y0
	VADDPD       32(SI), Y1, Y1
	VADDPD       64(SI), Y2, Y2
	VADDPD       96(SI), Y3, Y3
	VMOVNTPD     Y0, 0(DI)
	VMOVNTPD     Y1, 32(DI)
	VMOVNTPD     Y2, 64(DI)
	VMOVNTPD     Y3, 96(DI)
	ADDQ         $128, SI
	ADDQ         $128, DX
	ADDQ         $128, DI
	DECQ         CX
	JNZ          triad256
	SFENCE
	VZEROUPPER
	RET

// func readSSE2(p unsafe.Pointer, n int)
TEXT ·readSSE2(SB), NOSPLIT, $0-16
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	SHRQ   $7, CX
read128:
	MOVAPS 0(SI), X0
	MOVAPS 16(SI), X1
	MOVAPS 32(SI), X2
	MOVAPS 48(SI), X3
	MOVAPS 64(SI), X4
	MOVAPS 80(SI), X5
	MOVAPS 96(SI), X6
	MOVAPS 112(SI), X7
	ADDQ   $128, SI
	DECQ   CX
	JNZ    read128
	RET

// func writeSSE2(p unsafe.Pointer, n int, v uint64)
TEXT ·writeSSE2(SB), NOSPLIT, $0-24
	MOVQ       p+0(FP), DI
	MOVQ       n+8(FP), CX
	SHRQ       $7, CX
	MOVQ       v+16(FP), X0
	PUNPCKLQDQ X0, X0
write128:
	MOVNTDQ X0, 0(DI)
	MOVNTDQ X0, 16(DI)
	MOVNTDQ X0, 32(DI)
	MOVNTDQ X0, 48(DI)
	MOVNTDQ X0, 64(DI)
	MOVNTDQ X0, 80(DI)
	MOVNTDQ X0, 96(DI)
	MOVNTDQ X0, 112(DI)
	ADDQ    $128, DI
	DECQ    CX
	JNZ     write128
	SFENCE
	RET

// func copySSE2(dst, src unsafe.Pointer, n int)
TEXT ·copySSE2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	SHRQ    $7, CX
copy128:
	MOVAPS  0(SI), X0
	MOVAPS  16(SI), X1
	MOVAPS  32(SI), X2
	MOVAPS  48(SI), X3
	MOVAPS  64(SI), X4
	MOVAPS  80(SI), X5
	MOVAPS  96(SI), X6
	MOVAPS  112(SI), X7
	MOVNTDQ X0, 0(DI)
	MOVNTDQ X1, 16(DI)
	MOVNTDQ X2, 32(DI)
	MOVNTDQ X3, 48(DI)
	MOVNTDQ X4, 64(DI)
	MOVNTDQ X5, 80(DI)
	MOVNTDQ X6, 96(DI)
	MOVNTDQ X7, 112(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     copy128
	SFENCE
	RET

// func triadSSE2(a, b, c unsafe.Pointer, s float64, n int)
TEXT ·triadSSE2(SB), NOSPLIT, $0-40
	MOVQ    a+0(FP), DI
	MOVQ    b+8(FP), SI
	MOVQ    c+16(FP), DX
	MOVSD   s+24(FP), X8
	UNPCKLPD X8, X8
	MOVQ    n+32(FP), CX
	SHRQ    $6, CX
triad128:
	MOVAPD  0(DX), X0
	MOVAPD  16(DX), X1
	MOVAPD  32(DX), X2
	MOVAPD  48(DX), X3
	MULPD   X8, X0
	MULPD   X8, X1
	MULPD   X8, X2
	MULPD   X8, X3
	ADDPD   0(SI), X0
	ADDPD   16(SI), X1
	ADDPD   32(SI), X2
	ADDPD   48(SI), X3
	MOVNTPD X0, 0(DI)
	MOVNTPD X1, 16(DI)
	MOVNTPD X2, 32(DI)
	MOVNTPD X3, 48(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     triad128
	SFENCE
	RET
