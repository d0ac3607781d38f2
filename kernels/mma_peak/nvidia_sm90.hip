// The matrix peak on NVIDIA Hopper through wgmma. Compiled for sm_90a alone (the *_sm90 files,
// CMakeLists.txt); the host launches it only on an sm_90 device of a build with sm_90a code
// (pick_engine in gpu.hip).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <type_traits>

#include "common/gpu_wgmma.hpp"
#include "gpu/gpu_backend.hpp"
#include "mma_peak/engines.hpp"
#include "mma_peak/wgmma_ops.hpp"

namespace bwprof {

namespace {

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

static_assert(2 * kWgUnroll * 64 * 256 * 2 == 524288, "wgmma: 2 warpgroups x 8 MMAs of 64 x 256 x K x 2 = 2^19 x K");

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

}  // namespace

void mma_peak_wgmma(const MmaPeakLaunch& l) {
  mma_peak_by_type(l.type, [&](auto t) { launch_wg<decltype(t)::value>(l); });
  BWPROF_CHECK_LAUNCH("bwprof_wgmma_peak");
}
Resources mma_peak_wgmma_resources(MmaType t) {
  Resources r;
  mma_peak_by_type(t, [&](auto v) { r = kernel_resources(bwprof_wgmma_peak<decltype(v)::value>, kMmaPeakThreads, kWgSmem); });
  return r;
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
