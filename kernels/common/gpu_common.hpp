// Device helpers shared by the kernels: 16-byte vectors of FP32/FP16/BF16, reductions, activations,
// and the one choice of a kernel's element type by dtype.
#pragma once
#include <cstdint>

#include "bwprof/dtype.hpp"
#include "common/gpu_runtime.hpp"

namespace bwprof {
namespace gpu {

using bf16 = gpu_bf16;

template <class T> struct Type { using type = T; };
// Calls f(Type<T>{}) with T the device element type of `t` (float, __half or bf16):
//   by_dtype(p.dtype, [&](auto t) { using T = typename decltype(t)::type; run<T>(); });
template <class F>
decltype(auto) by_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF16: return f(Type<__half>{});
    case DType::kBF16: return f(Type<bf16>{});
    default: return f(Type<float>{});
  }
}

template <class T> struct Elems { static constexpr int kVec = 16 / sizeof(T); };

// BF16 <-> FP32 by their bits: exact one way, round to nearest even the other (a NaN stays NaN),
// the same on both vendors (the host's float_to_bf16 in bwprof/bf16.hpp).
__device__ __forceinline__ float bf16_bits_to_f(unsigned short b) { return __uint_as_float(unsigned(b) << 16); }
__device__ __forceinline__ unsigned short f_to_bf16_bits(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<unsigned short>(x >> 16);
}
// Two floats as a BF16 pair (a in the low half), the packed operand the matrix units take.
__device__ __forceinline__ unsigned pack_bf16x2(float a, float b) {
#if defined(BWPROF_CUDA) && __CUDA_ARCH__ >= 800
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
#else
  return unsigned(f_to_bf16_bits(a)) | (unsigned(f_to_bf16_bits(b)) << 16);
#endif
}
__device__ __forceinline__ unsigned pack_half2(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}
__device__ __forceinline__ float2 unpack_bf16x2(unsigned w) {
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(bf16 x) { return bf16_bits_to_f(*reinterpret_cast<const unsigned short*>(&x)); }
template <class T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ bf16 from_f<bf16>(float x) {
  const unsigned short b = f_to_bf16_bits(x);
  return *reinterpret_cast<const bf16*>(&b);
}
// Two consecutive elements of T (a pair of 16-bit values or two floats) from/to floats.
template <class T> __device__ __forceinline__ unsigned pack2(float a, float b);
template <> __device__ __forceinline__ unsigned pack2<__half>(float a, float b) { return pack_half2(a, b); }
template <> __device__ __forceinline__ unsigned pack2<bf16>(float a, float b) { return pack_bf16x2(a, b); }
template <class T> __device__ __forceinline__ float2 unpack2(unsigned w);
template <> __device__ __forceinline__ float2 unpack2<__half>(unsigned w) {
  return __half22float2(*reinterpret_cast<const __half2*>(&w));
}
template <> __device__ __forceinline__ float2 unpack2<bf16>(unsigned w) { return unpack_bf16x2(w); }

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
template <> __device__ __forceinline__ void unpack<bf16>(const uint4& v, float* f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = unpack_bf16x2(w[i]);
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
template <> __device__ __forceinline__ uint4 pack<bf16>(const float* f) {
  return make_uint4(pack_bf16x2(f[0], f[1]), pack_bf16x2(f[2], f[3]), pack_bf16x2(f[4], f[5]), pack_bf16x2(f[6], f[7]));
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

// Eight consecutive 16-bit elements from any 2-byte boundary, as 16 bytes: one 16-byte load where
// p is 16-byte aligned, four 4-byte loads where it is 4-byte aligned, else five aligned 4-byte
// loads (they take in the element before p and the one after the eighth) joined by funnel shifts;
// two-byte loads where `after_ok` says the element after the eighth may lie outside the allocation.
// Rows of an odd width start at every 2-byte boundary: this keeps their loads wide.
__device__ __forceinline__ uint4 load8_b16(const unsigned short* p, bool after_ok) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  if ((a & 15) == 0) return *reinterpret_cast<const uint4*>(p);
  if ((a & 3) == 0) {
    const unsigned* w = reinterpret_cast<const unsigned*>(p);
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  if (after_ok) {
    const unsigned* w = reinterpret_cast<const unsigned*>(p - 1);
    const unsigned x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3], x4 = w[4];
    return make_uint4(__funnelshift_r(x0, x1, 16), __funnelshift_r(x1, x2, 16), __funnelshift_r(x2, x3, 16),
                      __funnelshift_r(x3, x4, 16));
  }
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = unsigned(p[2 * i]) | (unsigned(p[2 * i + 1]) << 16);
  return make_uint4(w[0], w[1], w[2], w[3]);
}
// The first n (< 8) of them, zeros after.
__device__ __forceinline__ uint4 load_b16_tail(const unsigned short* p, int n) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    w[i] = (2 * i < n ? unsigned(p[2 * i]) : 0u) | (2 * i + 1 < n ? unsigned(p[2 * i + 1]) << 16 : 0u);
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Eight 16-bit elements that start s (0..7) elements into `lo`, `hi` holding the eight after lo:
// the window that an aligned pair of 16-byte words holds of a row starting anywhere. Branch-free
// (two word-selecting steps and a 16-bit funnel shift), so that lanes at different offsets do not
// diverge, and no per-element loads.
__device__ __forceinline__ uint4 shift_b16(const uint4& lo, const uint4& hi, unsigned s) {
  const unsigned u[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  unsigned v[6], x[5];
  const bool two = s & 4u, one = s & 2u;
#pragma unroll
  for (int i = 0; i < 6; ++i) v[i] = two ? u[i + 2] : u[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) x[i] = one ? v[i + 1] : v[i];
  const unsigned r = (s & 1u) * 16u;
  return make_uint4(__funnelshift_r(x[0], x[1], r), __funnelshift_r(x[1], x[2], r), __funnelshift_r(x[2], x[3], r),
                    __funnelshift_r(x[3], x[4], r));
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

#if defined(BWPROF_HIP)
// The element the AMD matrix builtins take for storage type T: _Float16 for FP16, the raw bits as
// short for BF16 (the MFMA/WMMA bf16 builtins' operand type).
template <class T> struct MatrixElem;
template <> struct MatrixElem<__half> {
  using type = _Float16;
  __device__ static _Float16 from(__half x) { return static_cast<_Float16>(__half2float(x)); }
};
template <> struct MatrixElem<bf16> {
  using type = short;
  __device__ static short from(bf16 x) { return static_cast<short>(x.data); }
};
#endif

// GELU, x Phi(x), through e = erfc(a) / 2, a = |x| / sqrt 2: x e below 0, x (1 - e) above, so
// neither side cancels (1 + erf(x / sqrt 2) is nothing below x = -5 in FP32). erfc(a) = t exp(-a^2 +
// P(t)), t = 1 / (1 + a / 2), P of degree 9: the Chebyshev fit of Numerical Recipes' erfcc, fractional
// error under 1.2e-7 for every a >= 0, here with log2(e) folded into P and into a^2 = x^2 / 2 so that
// the exponential is one exp2; one reciprocal, no branch. In FP32 against the float64 gold: 7e-8 of the
// largest output over [-3, 3], relative error under 1e-5 down to x = -11 (rounding x / sqrt 2 alone
// costs 6e-6 there). It replaced erfcf, whose 51 instructions (3 MUFU) left bias + GELU compute-bound
// on Hopper (H200 and H100 runs of 2026-11; git history holds the figures).
__device__ __forceinline__ float gelu_f(float x) {
  const float ax = fabsf(x);
  const float t = __fdividef(1.f, fmaf(0.353553391f, ax, 1.f));
  float p = 0.246517298f;
  p = fmaf(p, t, -1.18611495f);
  p = fmaf(p, t, 2.14747446f);
  p = fmaf(p, t, -1.63775315f);
  p = fmaf(p, t, 0.402321582f);
  p = fmaf(p, t, -0.26875686f);
  p = fmaf(p, t, 0.139630057f);
  p = fmaf(p, t, 0.539700616f);
  p = fmaf(p, t, 1.4427292f);
  p = fmaf(p, t, -1.82574822f);
  const float e = 0.5f * t * exp2f(fmaf(-0.72134752f * ax, ax, p));
  return x * (x < 0.f ? e : 1.f - e);
}

enum ActKind { kActNone = 0, kActRelu = 1, kActGelu = 2, kActSilu = 3 };
template <int A> __device__ __forceinline__ float act(float x) {
  if (A == kActRelu) return x > 0.f ? x : 0.f;
  if (A == kActGelu) return gelu_f(x);
  if (A == kActSilu) return x / (1.f + __expf(-x));
  return x;
}

}  // namespace gpu
}  // namespace bwprof
