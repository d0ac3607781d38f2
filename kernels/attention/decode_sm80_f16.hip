// The decode kernel (decode_sm80.hpp) for F16 storage.
#include "attention/decode_sm80.hpp"
#if defined(BWPROF_CUDA)
namespace bwprof {
namespace attention {

Resources decode_f16(const Launch& l, bool launch) {
  return decode_detail::by_dim<__half>(l, launch);
}

}  // namespace attention
}  // namespace bwprof
#endif
