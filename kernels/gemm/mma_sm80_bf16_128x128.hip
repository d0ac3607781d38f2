// The mma.sync GEMM's 128x128 tile for BF16 storage (mma_sm80.hpp): a file of its own, for a parallel build.
#include "gemm/mma_sm80_launch.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {

Resources gemm::mma_bf16_128x128(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch) {
  return mma_launch<bf16, 128, 128, 64, 32, 3, 64>(a, load, act, st, launch);
}

}  // namespace bwprof
#endif
