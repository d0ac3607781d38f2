// The mma.sync GEMM's launchers (GPU compilers only): one per storage type and tile, each in a file
// of its own (mma_sm80_<type>_<tile>.hip) so that a parallel build compiles its kernels side by side;
// the runner (mma_sm80.hip) chooses the tile, the load and the split and calls one of them.
#pragma once
#include <cstdint>

#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"
#include "common/reference.hpp"

namespace bwprof {
namespace gemm {

// One launch of the mma.sync kernel (mma_sm80_kernel.hpp): its operands and the K split.
struct MmaArgs {
  const void* A;
  const void* B;
  const void* bias;
  void* C;
  float* acc;  // the split's FP32 accumulator (null unsplit)
  int* counts;  // a count a tile for the last split's finish (null unsplit)
  std::int64_t M, N, K, lda, ldb, ldc;
  int split_len, splits;
};
// Launches the kernel of one tile with `load` (kLoadAsync, kLoadRealign, kLoadRegs) on `st`, or
// (launch false) raises its shared-memory limit and returns its resources.
using MmaLauncher = Resources (*)(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_f16_128x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_f16_64x64(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_f16_16x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_bf16_128x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_bf16_64x64(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);
Resources mma_bf16_16x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch);

}  // namespace gemm
}  // namespace bwprof
