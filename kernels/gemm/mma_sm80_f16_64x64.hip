// The mma.sync GEMM's 64x64 tile for F16 storage (mma_sm80.hpp): a file of its own, for a parallel build.
#include "gemm/mma_sm80_launch.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {

Resources gemm::mma_f16_64x64(const MmaArgs& a, int load, Act act, hipStream_t st, bool launch) {
  return mma_launch<__half, 64, 64, 32, 32, 3, 64>(a, load, act, st, launch);
}

}  // namespace bwprof
#endif
