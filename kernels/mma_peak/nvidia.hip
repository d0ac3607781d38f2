// The matrix peak on NVIDIA through mma.sync (sm_80+; FP8 sm_89+; wgmma is nvidia_sm90.hip's).
// Bodies exist only where the compiling pass has the instructions; the host picks an engine the
// device has (gpu.hip), and the reference check catches a body this build left empty. Compiled
// for every architecture the build has (BWPROF_CUDA_MINOR_SOURCES): its FP8 needs sm_89 code.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <type_traits>

#include "common/gpu_mma.hpp"
#include "gpu/gpu_backend.hpp"
#include "mma_peak/engines.hpp"

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

static_assert(kSyncChains * kSyncUnroll * 8 == 2048, "mma.sync: 8 warps x 256 MMAs of 16 x 8 x K = 2^19 x K");

template <int T>
void launch_sync(const MmaPeakLaunch& l) {
  bwprof_mma_sync_peak<T><<<l.blocks, kMmaPeakThreads, 0, l.stream>>>(l.out, l.iters, l.restart, l.a_bits, l.b_bits);
}

}  // namespace

void mma_peak_mma_sync(const MmaPeakLaunch& l) {
  mma_peak_by_type(l.type, [&](auto t) { launch_sync<decltype(t)::value>(l); });
  BWPROF_CHECK_LAUNCH("bwprof_mma_sync_peak");
}
int mma_peak_mma_sync_fp8_code() {
  hipFuncAttributes a{};
  BWPROF_GPU_CHECK(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(bwprof_mma_sync_peak<3>)));
  // The virtual architecture its code was compiled from, and the machine code's (an sm_80 cubin
  // running on an sm_89 GPU says 80 in both).
  return std::min(a.ptxVersion, a.binaryVersion);
}
Resources mma_peak_mma_sync_resources(MmaType t) {
  Resources r;
  mma_peak_by_type(t, [&](auto v) { r = kernel_resources(bwprof_mma_sync_peak<decltype(v)::value>, kMmaPeakThreads); });
  return r;
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
