// The vector units' Q4_0 matmul for BF16 storage (matmul_vec.hpp): a file of its own, for a parallel build.
#include "q4_0/matmul_vec.hpp"

namespace bwprof {

void q4_vec_bf16(const Q4VecArgs& a) { q4_vec_launch<bf16>(a); }
Resources q4_vec_bf16_resources(bool tiled) { return q4_vec_resources<bf16>(tiled); }

}  // namespace bwprof
