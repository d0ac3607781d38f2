// The decode kernel (decode_sm80.hpp) for BF16 storage.
#include "attention/decode_sm80.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {
namespace attention {

Resources decode_bf16(const Launch& l, bool launch) {
  return decode_detail::by_dim<gpu::bf16>(l, launch);
}

}  // namespace attention
}  // namespace bwprof
#endif
