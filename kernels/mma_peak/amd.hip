// The matrix peak on AMD: MFMA 32x32 (CDNA: gfx90a, gfx94x; wave64) and WMMA 16x16x16 (RDNA3:
// gfx11, wave32). Per wave, 4 independent accumulator chains; the instructions per step make
// the block's 2^19 x K FLOPs whatever the instruction's K. Bodies exist only in the passes of
// targets that have the instruction; the reference check catches one this build left empty.
// `make hip-wmma-check` compiles this file for gfx1100 and looks for the WMMA instructions.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_HIP)
#include "gpu/gpu_backend.hpp"
#include "mma_peak/engines.hpp"

namespace bwprof {

namespace {

#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define BWPROF_MFMA_DEVICE 1
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define BWPROF_MFMA_CDNA3 1
#endif
#endif
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#if !defined(__AMDGCN_WAVEFRONT_SIZE) || __AMDGCN_WAVEFRONT_SIZE == 32
#define BWPROF_WMMA_PEAK_DEVICE 1
#endif
#endif

typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef int i32x16 __attribute__((ext_vector_type(16)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef int i32x8 __attribute__((ext_vector_type(8)));
typedef int i32x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));
typedef short i16x16 __attribute__((ext_vector_type(16)));
typedef float f32x2 __attribute__((ext_vector_type(2)));

constexpr int kChains = 4;
constexpr int kT16 = 0, kTBF16 = 1, kTTF32 = 2, kTFP8 = 3, kTINT8 = 4;

template <class V, class S>
__device__ __forceinline__ V splat(S bits) {
  V v;
  static_assert(sizeof(V) % sizeof(S) == 0, "splat: whole words");
  S* w = reinterpret_cast<S*>(&v);
  for (unsigned i = 0; i < sizeof(V) / sizeof(S); ++i) w[i] = bits;
  return v;
}

// Adds the chains' N accumulators each into the thread's FP32 total and zeroes them: the chains
// restart (mma_peak.hpp).
template <int N, class Acc>
__device__ __forceinline__ void fold_chains(Acc (&d)[kChains], float& total) {
  float s = 0.f;
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < N; ++i) {
      s += static_cast<float>(d[c][i]);
      d[c][i] = 0;
    }
  total += s;
}

// ---- MFMA: 32x32 instructions, 16 accumulators per lane each ------------------------------
// FLOPs per instruction: FP16/BF16 32x32x8 16384; TF32 (xf32) 32x32x4 8192; FP8 32x32x16 32768;
// INT8 32x32x8 16384 (gfx90a) or 32x32x16 32768 (gfx94x). A step of a wave is 2^17 x K.
template <int T>
__global__ void __launch_bounds__(kMmaPeakThreads) bwprof_mfma_peak(float* out, int iters, int restart,
                                                                   unsigned a_bits, unsigned b_bits) {
  float total = 0.f;
#if defined(BWPROF_MFMA_DEVICE)
  using Acc = typename std::conditional<T == kTINT8, i32x16, f32x16>::type;
  Acc d[kChains];
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < 16; ++i) d[c][i] = 0;
#if defined(BWPROF_MFMA_CDNA3)
  constexpr int kInt8PerStep = 128;
#else
  constexpr int kInt8PerStep = 256;
#endif
  constexpr int per_step = T == kTINT8 ? kInt8PerStep : 128;  // instructions per wave and step
  const unsigned long long a64 = (static_cast<unsigned long long>(a_bits) << 32) | a_bits;
  const unsigned long long b64 = (static_cast<unsigned long long>(b_bits) << 32) | b_bits;
  int left = restart;  // steps before the chains restart (mma_peak.hpp)
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < per_step / kChains; ++u)
#pragma unroll
      for (int c = 0; c < kChains; ++c) {
        if constexpr (T == kT16) {
          d[c] = __builtin_amdgcn_mfma_f32_32x32x8f16(splat<f16x4>(a64), splat<f16x4>(b64), d[c], 0, 0, 0);
        } else if constexpr (T == kTBF16) {
          d[c] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(splat<i16x4>(a64), splat<i16x4>(b64), d[c], 0, 0, 0);
        } else if constexpr (T == kTTF32) {
#if defined(BWPROF_MFMA_CDNA3) && __has_builtin(__builtin_amdgcn_mfma_f32_32x32x4_xf32)
          d[c] = __builtin_amdgcn_mfma_f32_32x32x4_xf32(splat<f32x2>(a64), splat<f32x2>(b64), d[c], 0, 0, 0);
#endif
        } else if constexpr (T == kTFP8) {
#if defined(BWPROF_MFMA_CDNA3) && __has_builtin(__builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8)
          d[c] = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(static_cast<long>(a64), static_cast<long>(b64), d[c], 0, 0, 0);
#endif
        } else {
#if defined(BWPROF_MFMA_CDNA3)
          d[c] = __builtin_amdgcn_mfma_i32_32x32x16_i8(static_cast<long>(a64), static_cast<long>(b64), d[c], 0, 0, 0);
#else
          d[c] = __builtin_amdgcn_mfma_i32_32x32x8i8(static_cast<int>(a_bits), static_cast<int>(b_bits), d[c], 0, 0, 0);
#endif
        }
      }
    if (--left == 0 || it + 1 == iters) fold_chains<16>(d, total), left = restart;
  }
#endif
  out[blockIdx.x * kMmaPeakThreads + threadIdx.x] = total;
}

// ---- WMMA (wave32): 16x16x16, 8 accumulators per lane, 8192 FLOPs each ---------------------
// A step of a wave is 2^16 x K: 128 instructions for FP16 / BF16, 256 for INT8 (IU8).
template <int T>
__global__ void __launch_bounds__(kMmaPeakThreads) bwprof_wmma_peak(float* out, int iters, int restart,
                                                                   unsigned a_bits, unsigned b_bits) {
  float total = 0.f;
#if defined(BWPROF_WMMA_PEAK_DEVICE)
  using Acc = typename std::conditional<T == kTINT8, i32x8, f32x8>::type;
  Acc d[kChains];
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < 8; ++i) d[c][i] = 0;
  constexpr int per_step = T == kTINT8 ? 256 : 128;
  int left = restart;  // steps before the chains restart (mma_peak.hpp)
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < per_step / kChains; ++u)
#pragma unroll
      for (int c = 0; c < kChains; ++c) {
        if constexpr (T == kT16)
          d[c] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(splat<f16x16>(a_bits), splat<f16x16>(b_bits), d[c]);
        else if constexpr (T == kTBF16)
          d[c] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(splat<i16x16>(a_bits), splat<i16x16>(b_bits), d[c]);
        else if constexpr (T == kTINT8)
          d[c] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, splat<i32x4>(a_bits), true, splat<i32x4>(b_bits), d[c],
                                                            false);
      }
    if (--left == 0 || it + 1 == iters) fold_chains<8>(d, total), left = restart;
  }
#endif
  out[blockIdx.x * kMmaPeakThreads + threadIdx.x] = total;
}

template <class F>
void by_type(MmaType t, F&& f) {
  switch (t) {
    case MmaType::kF16: f(std::integral_constant<int, kT16>()); break;
    case MmaType::kBF16: f(std::integral_constant<int, kTBF16>()); break;
    case MmaType::kTF32: f(std::integral_constant<int, kTTF32>()); break;
    case MmaType::kFP8: f(std::integral_constant<int, kTFP8>()); break;
    default: f(std::integral_constant<int, kTINT8>()); break;
  }
}

}  // namespace

void mma_peak_mfma(const MmaPeakLaunch& l) {
  by_type(l.type, [&](auto t) {
    bwprof_mfma_peak<decltype(t)::value><<<l.blocks, kMmaPeakThreads, 0, l.stream>>>(l.out, l.iters, l.restart, l.a_bits, l.b_bits);
  });
  BWPROF_CHECK_LAUNCH("bwprof_mfma_peak");
}
void mma_peak_wmma(const MmaPeakLaunch& l) {
  by_type(l.type, [&](auto t) {
    bwprof_wmma_peak<decltype(t)::value><<<l.blocks, kMmaPeakThreads, 0, l.stream>>>(l.out, l.iters, l.restart, l.a_bits, l.b_bits);
  });
  BWPROF_CHECK_LAUNCH("bwprof_wmma_peak");
}
Resources mma_peak_mfma_resources(MmaType t) {
  Resources r;
  by_type(t, [&](auto v) { r = kernel_resources(bwprof_mfma_peak<decltype(v)::value>, kMmaPeakThreads); });
  return r;
}
Resources mma_peak_wmma_resources(MmaType t) {
  Resources r;
  by_type(t, [&](auto v) { r = kernel_resources(bwprof_wmma_peak<decltype(v)::value>, kMmaPeakThreads); });
  return r;
}

}  // namespace bwprof
#endif  // BWPROF_HIP
