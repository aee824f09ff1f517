// Compiler portability for code that runs on both backends.
//
// Every per-element function in kernels/ is written once and compiled twice: by nvcc for the
// CUDA backend and by the host compiler for the CPU backend. WEFT_HD marks such functions.
// WEFT_WITH_CUDA is defined (by CMake) when the build links the CUDA runtime, whether or not
// the current translation unit is compiled by nvcc; __CUDACC__ says whether it is.
//
// WEFT_FORCEINLINE marks math that must be inlined wherever it is called: the rigid solve's
// per-row, per-joint and per-body functions (kernels/rod_joint.h, rigid_contact.h, rigid_body.h,
// compliant_alm.h, avbd.cuh). A tile kernel is instantiated once per tile size; left to its
// heuristics the compiler may inline a function into one instantiation and call it from another,
// and then contract its arithmetic into fused multiply-adds differently, which breaks the
// bit-identical results every launch size must give (docs/PERFORMANCE.md, the folded dual step).
//
// WEFT_NOINLINE is the opposite, for a computation two different kernels must agree on to the
// last bit: compiled once as a function of its own and called from both, never inlined, so that
// no caller's surrounding arithmetic is contracted into it (the rigid dual step, kernels/avbd.cuh,
// which the folding solve launch and the dual launch both take). The CPU build contracts nothing.
#pragma once

#if defined(__CUDACC__)
#define WEFT_HD __host__ __device__
#define WEFT_FORCEINLINE __forceinline__
#define WEFT_NOINLINE __noinline__ inline
#else
#define WEFT_HD
#define WEFT_FORCEINLINE inline
#define WEFT_NOINLINE inline
#endif

#if defined(__CUDA_ARCH__)
#define WEFT_DEVICE_PASS 1
#else
#define WEFT_DEVICE_PASS 0
#endif
