// BWPROF_HD marks a function of a plain C++ header that both a GPU kernel and host code (tests, the
// host's choices) call: __host__ __device__ under nvcc or hipcc, nothing under a host compiler.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define BWPROF_HD __host__ __device__
#else
#define BWPROF_HD
#endif
