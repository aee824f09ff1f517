// Compiler portability for code that runs on both backends.
//
// Every per-element function in kernels/ is written once and compiled twice: by nvcc for the
// CUDA backend and by the host compiler for the CPU backend. WEFT_HD marks such functions.
// WEFT_WITH_CUDA is defined (by CMake) when the build links the CUDA runtime, whether or not
// the current translation unit is compiled by nvcc; __CUDACC__ says whether it is.
#pragma once

#if defined(__CUDACC__)
#define WEFT_HD __host__ __device__
#define WEFT_FORCEINLINE __forceinline__
#else
#define WEFT_HD
#define WEFT_FORCEINLINE inline
#endif

#if defined(__CUDA_ARCH__)
#define WEFT_DEVICE_PASS 1
#else
#define WEFT_DEVICE_PASS 0
#endif
