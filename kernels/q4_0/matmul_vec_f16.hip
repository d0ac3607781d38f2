// The vector units' Q4_0 matmul for F16 storage (matmul_vec.hpp): a file of its own, for a parallel build.
#include "q4_0/matmul_vec.hpp"

namespace bwprof {

void q4_vec_f16(const Q4VecArgs& a) { q4_vec_launch<__half>(a); }
Resources q4_vec_f16_resources(bool tiled) { return q4_vec_resources<__half>(tiled); }

}  // namespace bwprof
