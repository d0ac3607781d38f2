// The matrix-peak engines' launches (nvidia.hip: mma.sync; nvidia_sm90.hip: wgmma; amd.hip: MFMA, WMMA). Each runs
// `blocks` blocks of kMmaPeakThreads for `iters` steps, adds its accumulators into the thread's FP32
// total and restarts its chains every `restart` steps (mma_peak.hpp), and writes each thread's total
// to out[block * kMmaPeakThreads + thread].
#pragma once
#include <cstdint>
#include <type_traits>

#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"
#include "mma_peak/mma_peak.hpp"

namespace bwprof {

struct MmaPeakLaunch {
  MmaType type;
  int blocks, iters, restart;
  float* out;
  std::uint32_t a_bits, b_bits;
  hipStream_t stream;
};

// The launch of `f` with the type as a compile-time constant (0..4 in MmaType's order).
template <class F>
void mma_peak_by_type(MmaType t, F&& f) {
  switch (t) {
    case MmaType::kF16: f(std::integral_constant<int, 0>()); break;
    case MmaType::kBF16: f(std::integral_constant<int, 1>()); break;
    case MmaType::kTF32: f(std::integral_constant<int, 2>()); break;
    case MmaType::kFP8: f(std::integral_constant<int, 3>()); break;
    default: f(std::integral_constant<int, 4>()); break;
  }
}

#if defined(BWPROF_CUDA)
// nvidia_sm90.hip (sm_90a code only: the host calls it on Hopper alone, gpu.hip)
void mma_peak_wgmma(const MmaPeakLaunch& l);
void mma_peak_mma_sync(const MmaPeakLaunch& l);
Resources mma_peak_wgmma_resources(MmaType t);
Resources mma_peak_mma_sync_resources(MmaType t);
// The architecture the FP8 mma.sync kernel that runs on this GPU was compiled for (89: it has FP8).
int mma_peak_mma_sync_fp8_code();
#else
void mma_peak_mfma(const MmaPeakLaunch& l);
void mma_peak_wmma(const MmaPeakLaunch& l);
Resources mma_peak_mfma_resources(MmaType t);
Resources mma_peak_wmma_resources(MmaType t);
#endif

}  // namespace bwprof
