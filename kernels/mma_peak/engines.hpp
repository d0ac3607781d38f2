// The matrix-peak engines' launches (nvidia.hip: wgmma, mma.sync; amd.hip: MFMA, WMMA). Each runs
// `blocks` blocks of kMmaPeakThreads for `iters` steps, adds its accumulators into the thread's FP32
// total and restarts its chains every `restart` steps (mma_peak.hpp), and writes each thread's total
// to out[block * kMmaPeakThreads + thread].
#pragma once
#include <cstdint>

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

#if defined(BWPROF_CUDA)
void mma_peak_wgmma(const MmaPeakLaunch& l);
void mma_peak_mma_sync(const MmaPeakLaunch& l);
Resources mma_peak_wgmma_resources(MmaType t);
Resources mma_peak_mma_sync_resources(MmaType t);
#else
void mma_peak_mfma(const MmaPeakLaunch& l);
void mma_peak_wmma(const MmaPeakLaunch& l);
Resources mma_peak_mfma_resources(MmaType t);
Resources mma_peak_wmma_resources(MmaType t);
#endif

}  // namespace bwprof
