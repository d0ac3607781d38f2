// The wgmma GEMM's launchers (GPU compilers only): one per storage type, each in a file of its own
// (wgmma_sm90_<type>.hip) so that a parallel build compiles its kernels side by side; the runner
// (wgmma_sm90.hip) chooses the tile, the split and clusters and calls one of them. CUDA builds only.
#pragma once
#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"
#include "common/reference.hpp"

namespace bwprof {
namespace gemm {

// One launch of the wgmma kernel (wgmma_sm90_kernel.hpp): its operands, the K split and the tensor
// maps of A and B (made by the launcher's first call, launch false).
struct WgmmaArgs {
  const void* A;
  const void* B;
  const void* bias;
  void* C;
  void* ws;     // the split's tile sums (null unsplit)
  int* counts;  // a counter a tile (null unsplit)
  std::int64_t M, N, K, lda, ldb, ldc;
  int split_steps, splits;
  bool slots;
  CUtensorMap tmA, tmB;
};
// Launches the kernel of tile `tile` (choice.hpp's kWgmmaTiles) in clusters of `cluster` (1 or 2)
// on `st`, or (launch false) makes the tensor maps, raises its shared-memory limit and returns its
// resources.
Resources wgmma_f16(WgmmaArgs& a, int tile, int cluster, Act act, hipStream_t st, bool launch);
Resources wgmma_bf16(WgmmaArgs& a, int tile, int cluster, Act act, hipStream_t st, bool launch);

}  // namespace gemm
}  // namespace bwprof
