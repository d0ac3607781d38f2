// The wgmma GEMM for BF16 storage (wgmma_sm90.hpp): a file of its own, for a parallel build.
#include "gemm/wgmma_sm90_launch.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {

Resources gemm::wgmma_bf16(WgmmaArgs& a, int tile, int cluster, Act act, hipStream_t st, bool launch) {
  return wgmma_launch<bf16>(a, tile, cluster, act, st, launch);
}

}  // namespace bwprof
#endif
