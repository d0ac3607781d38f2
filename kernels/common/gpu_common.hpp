// Device helpers shared by the kernels: 16-byte vectors of FP32/FP16, reductions, activations.
#pragma once
#include <cstdint>

#include "common/gpu_runtime.hpp"

namespace bwprof {
namespace gpu {

template <class T> struct Elems { static constexpr int kVec = 16 / sizeof(T); };

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
template <class T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }

// 16 bytes <-> 4 floats or 8 halves, as floats.
template <class T> __device__ __forceinline__ void unpack(const uint4& v, float* f);
template <> __device__ __forceinline__ void unpack<float>(const uint4& v, float* f) {
  f[0] = __uint_as_float(v.x); f[1] = __uint_as_float(v.y); f[2] = __uint_as_float(v.z); f[3] = __uint_as_float(v.w);
}
template <> __device__ __forceinline__ void unpack<__half>(const uint4& v, float* f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 h = *reinterpret_cast<const __half2*>(&w[i]);
    float2 t = __half22float2(h);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
template <class T> __device__ __forceinline__ uint4 pack(const float* f);
template <> __device__ __forceinline__ uint4 pack<float>(const float* f) {
  return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
}
template <> __device__ __forceinline__ uint4 pack<__half>(const float* f) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
    w[i] = *reinterpret_cast<unsigned*>(&h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// A read-only load that skips allocating in L1: for data read once (weights streamed by a GEMV).
// On the H100/H200 it left more of the SM's load capacity for bytes in flight (+10% for the FP16
// GEMV). Elsewhere a plain load.
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
#else
  return *p;
#endif
}
__device__ __forceinline__ uint2 load_stream(const uint2* p) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 700
  uint2 r;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
#else
  return *p;
#endif
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o >>= 1) v += BWPROF_SHFL_XOR(v, o);
  return v;
}

// Sum over the block; every thread gets the result. `scratch` holds one float per warp (<= 32).
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const int warps = (blockDim.x + warpSize - 1) / warpSize;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = lane < warps ? scratch[lane] : 0.0f;
  return warp_sum(t);
}

enum ActKind { kActNone = 0, kActRelu = 1, kActGelu = 2, kActSilu = 3 };
template <int A> __device__ __forceinline__ float act(float x) {
  if (A == kActRelu) return x > 0.f ? x : 0.f;
  if (A == kActGelu) return 0.5f * x * (1.f + erff(x * 0.70710678f));
  if (A == kActSilu) return x / (1.f + __expf(-x));
  return x;
}

}  // namespace gpu
}  // namespace bwprof
