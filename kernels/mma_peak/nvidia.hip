// The matrix peak on NVIDIA: wgmma (Hopper, sm_90a) and mma.sync (sm_80+; FP8 sm_89+). Bodies
// exist only where the compiling pass has the instructions; the host picks an engine the device
// has (gpu.hip), and the reference check catches a body this build left empty.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <type_traits>

#include "common/gpu_mma.hpp"
#include "common/gpu_wgmma.hpp"
#include "gpu/gpu_backend.hpp"
#include "mma_peak/engines.hpp"
#include "mma_peak/wgmma_ops.hpp"

namespace bwprof {

namespace {

// ---- mma.sync: per warp 8 independent accumulator chains, 32 MMAs each per step -------------
// A unit step of one block is 2^19 x K FLOPs: 8 warps x 256 MMAs of m16n8kK (K = 16, 8, 32).
constexpr int kSyncChains = 8, kSyncUnroll = 32;

template <int T>
__device__ __forceinline__ void mma_sync_step(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  if constexpr (T == static_cast<int>(MmaType::kF16)) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == static_cast<int>(MmaType::kBF16)) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == static_cast<int>(MmaType::kTF32)) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == static_cast<int>(MmaType::kFP8)) {
#if __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
  }
#endif
}

__device__ __forceinline__ void mma_sync_s8(int (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Every `restart` steps (mma_peak.hpp) the chains are added into the thread's FP32 total and zeroed.
template <int T>
__global__ void __launch_bounds__(kMmaPeakThreads) bwprof_mma_sync_peak(float* out, int iters, int restart,
                                                                         unsigned a_bits, unsigned b_bits) {
  const unsigned a[4] = {a_bits, a_bits, a_bits, a_bits}, b[2] = {b_bits, b_bits};
  using Acc = typename std::conditional<T == static_cast<int>(MmaType::kINT8), int, float>::type;
  Acc d[kSyncChains][4];
#pragma unroll
  for (int c = 0; c < kSyncChains; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) d[c][i] = 0;
  float total = 0.f;
  int left = restart;  // steps before the chains restart
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kSyncUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kSyncChains; ++c) {
        if constexpr (T == static_cast<int>(MmaType::kINT8)) mma_sync_s8(d[c], a, b);
        else mma_sync_step<T>(d[c], a, b);
      }
    if (--left == 0 || it + 1 == iters) {
      float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int c = 0; c < kSyncChains; ++c)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          s[i] += static_cast<float>(d[c][i]);
          d[c][i] = 0;
        }
      total += (s[0] + s[1]) + (s[2] + s[3]);
      left = restart;
    }
  }
  out[blockIdx.x * kMmaPeakThreads + threadIdx.x] = total;
}

// ---- wgmma: two warpgroups per block, each a chain of m64n256 MMAs on one accumulator --------
// A unit step of one block is 2^19 x K FLOPs: 2 warpgroups x 8 MMAs of 64 x 256 x K. A (64 rows)
// and B (256 rows) sit in shared memory as 128-byte rows with the 128-byte swizzle; every
// element holds the same value, so the layout cannot change the result.
constexpr int kWgUnroll = 8;
constexpr int kWgSmemA = 64 * 128, kWgSmemB = 256 * 128, kWgSmem = kWgSmemA + kWgSmemB + 1024;

// Every `restart` steps (mma_peak.hpp) the warpgroup waits for its MMAs, adds its accumulators into
// the thread's FP32 total, and the next step's first MMA starts the chain afresh (scale-d = 0).
template <int T>
__global__ void __launch_bounds__(kMmaPeakThreads, 1) bwprof_wgmma_peak(float* out, int iters, int restart,
                                                                         unsigned a_bits, unsigned b_bits) {
#if defined(BWPROF_WGMMA_DEVICE)
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle needs 1024-byte aligned tiles.
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) & ~1023ull);
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  for (int i = threadIdx.x; i < (kWgSmemA + kWgSmemB) / 4; i += kMmaPeakThreads) words[i] = i < kWgSmemA / 4 ? a_bits : b_bits;
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the generic stores, seen by wgmma
  const unsigned base = gpu::smem_u32(smem);
  const unsigned long long da = gpu::wgmma_desc(base, 16, 1024), db = gpu::wgmma_desc(base + kWgSmemA, 16, 1024);
  using Acc = typename std::conditional<T == static_cast<int>(MmaType::kINT8), int, float>::type;
  Acc d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0;
  float total = 0.f;
  int left = restart;  // steps before the chain restarts
  for (int it = 0; it < iters; ++it) {
    const int keep = left == restart ? 0 : 1;  // 0: this step's first MMA starts the chain
    gpu::wgmma_fence();
#pragma unroll
    for (int u = 0; u < kWgUnroll; ++u) {
      const int acc = u == 0 ? keep : 1;
      if constexpr (T == static_cast<int>(MmaType::kF16)) gpu::wgmma_peak_f16(d, da, db, acc);
      if constexpr (T == static_cast<int>(MmaType::kBF16)) gpu::wgmma_peak_bf16(d, da, db, acc);
      if constexpr (T == static_cast<int>(MmaType::kTF32)) gpu::wgmma_peak_tf32(d, da, db, acc);
      if constexpr (T == static_cast<int>(MmaType::kFP8)) gpu::wgmma_peak_e4m3(d, da, db, acc);
      if constexpr (T == static_cast<int>(MmaType::kINT8)) gpu::wgmma_peak_s8(d, da, db, acc);
    }
    gpu::wgmma_commit();
    if (--left == 0 || it + 1 == iters) {
      gpu::wgmma_wait<0>();
      float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int i = 0; i < 128; ++i) s[i % 4] += static_cast<float>(d[i]);
      total += (s[0] + s[1]) + (s[2] + s[3]);
      left = restart;
    } else {
      gpu::wgmma_wait<1>();
    }
  }
  gpu::wgmma_wait<0>();
  out[blockIdx.x * kMmaPeakThreads + threadIdx.x] = total;
#endif
}

static_assert(kSyncChains * kSyncUnroll * 8 == 2048, "mma.sync: 8 warps x 256 MMAs of 16 x 8 x K = 2^19 x K");
static_assert(2 * kWgUnroll * 64 * 256 * 2 == 524288, "wgmma: 2 warpgroups x 8 MMAs of 64 x 256 x K x 2 = 2^19 x K");

template <int T>
void launch_sync(const MmaPeakLaunch& l) {
  bwprof_mma_sync_peak<T><<<l.blocks, kMmaPeakThreads, 0, l.stream>>>(l.out, l.iters, l.restart, l.a_bits, l.b_bits);
}
template <int T>
void launch_wg(const MmaPeakLaunch& l) {
  static bool configured = false;  // per type: once per process
  if (!configured) {
    BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(bwprof_wgmma_peak<T>),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, kWgSmem));
    configured = true;
  }
  bwprof_wgmma_peak<T><<<l.blocks, kMmaPeakThreads, kWgSmem, l.stream>>>(l.out, l.iters, l.restart, l.a_bits, l.b_bits);
}

template <class F>
void by_type(MmaType t, F&& f) {
  switch (t) {
    case MmaType::kF16: f(std::integral_constant<int, 0>()); break;
    case MmaType::kBF16: f(std::integral_constant<int, 1>()); break;
    case MmaType::kTF32: f(std::integral_constant<int, 2>()); break;
    case MmaType::kFP8: f(std::integral_constant<int, 3>()); break;
    default: f(std::integral_constant<int, 4>()); break;
  }
}

}  // namespace

void mma_peak_mma_sync(const MmaPeakLaunch& l) {
  by_type(l.type, [&](auto t) { launch_sync<decltype(t)::value>(l); });
  BWPROF_CHECK_LAUNCH("bwprof_mma_sync_peak");
}
void mma_peak_wgmma(const MmaPeakLaunch& l) {
  by_type(l.type, [&](auto t) { launch_wg<decltype(t)::value>(l); });
  BWPROF_CHECK_LAUNCH("bwprof_wgmma_peak");
}
Resources mma_peak_mma_sync_resources(MmaType t) {
  Resources r;
  by_type(t, [&](auto v) { r = kernel_resources(bwprof_mma_sync_peak<decltype(v)::value>, kMmaPeakThreads); });
  return r;
}
Resources mma_peak_wgmma_resources(MmaType t) {
  Resources r;
  by_type(t, [&](auto v) { r = kernel_resources(bwprof_wgmma_peak<decltype(v)::value>, kMmaPeakThreads, kWgSmem); });
  return r;
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
