// The mma.sync GEMM's 16x128 tile for BF16 storage (mma_sm80.hpp): a file of its own, for a parallel build.
#include "gemm/mma_sm80_launch.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {

Resources gemm::mma_bf16_16x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch) {
  return mma_launch<bf16, 16, 128, 16, 32, 4, 64>(a, load, act, st, launch);
}

}  // namespace bwprof
#endif
