// The vector units' Q4_0 matmul for F32 storage (matmul_vec.hpp): a file of its own, for a parallel build.
#include "q4_0/matmul_vec.hpp"

namespace bwprof {

void q4_vec_f32(const Q4VecArgs& a) { q4_vec_launch<float>(a); }
Resources q4_vec_f32_resources(bool tiled) { return q4_vec_resources<float>(tiled); }

}  // namespace bwprof
