// Loads for kernels that stream a matrix once (Q4_0 GEMV): predicated, so that the compiler keeps
// them in flight.
#pragma once
#include <cstdint>

#include "common/gpu_runtime.hpp"

namespace bwprof {
namespace gpu {

// Loads of data read once, issued only where `pred` holds, past L1, into registers that keep their
// old value otherwise. Written as predicated instructions with the old value as an input: a plain
// `if (pred) r = load` lets the compiler merge the old and the new value at once, which waits for
// the load there and turns a software pipeline back into one round trip per step.
__device__ __forceinline__ void load_stream_if(uint4& r, const void* p, bool pred) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %4, 0;\n"
      " @p ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
      : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w)
      : "r"(static_cast<int>(pred)), "l"(p));
#else
  if (pred) r = *static_cast<const uint4*>(p);
#endif
}
__device__ __forceinline__ void load_stream_if(uint2& r, const void* p, bool pred) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %2, 0;\n"
      " @p ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%3];}\n"
      : "+r"(r.x), "+r"(r.y)
      : "r"(static_cast<int>(pred)), "l"(p));
#else
  if (pred) r = *static_cast<const uint2*>(p);
#endif
}
// One word a lane (the scales of a Q4_0 chunk, spread over the lanes that use them).
__device__ __forceinline__ void load_stream_if(unsigned& r, const void* p, bool pred) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %1, 0;\n"
      " @p ld.global.nc.L1::no_allocate.u32 %0, [%2];}\n"
      : "+r"(r)
      : "r"(static_cast<int>(pred)), "l"(p));
#else
  if (pred) r = *static_cast<const unsigned*>(p);
#endif
}
// The same through L1 (small operands read by many warps: the activations of a GEMV).
__device__ __forceinline__ void load_cached_if(uint4& r, const void* p, bool pred) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %4, 0;\n"
      " @p ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
      : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w)
      : "r"(static_cast<int>(pred)), "l"(p));
#else
  if (pred) r = *static_cast<const uint4*>(p);
#endif
}
__device__ __forceinline__ void load_cached_if(unsigned& r, const void* p, bool pred) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  asm volatile(
      "{.reg .pred p; setp.ne.b32 p, %1, 0;\n"
      " @p ld.global.nc.u32 %0, [%2];}\n"
      : "+r"(r)
      : "r"(static_cast<int>(pred)), "l"(p));
#else
  if (pred) r = *static_cast<const unsigned*>(p);
#endif
}

}  // namespace gpu
}  // namespace bwprof
