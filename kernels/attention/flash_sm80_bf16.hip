// The matrix-unit attention kernel (flash_sm80.hpp) for BF16 storage.
#include "attention/flash_sm80.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {
namespace attention {

Resources flash_bf16(const Launch& l, int tile, bool launch) {
  return flash_detail::by_dim<gpu::bf16>(l, tile, launch);
}

}  // namespace attention
}  // namespace bwprof
#endif
