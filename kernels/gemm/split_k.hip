// Split K, shared by the `tensor` engines: where a GEMM has too few output tiles to fill the GPU,
// several blocks take one tile each over a part of K and add their FP32 partial sums into one
// accumulator [M, N] (atomically, in L2; rows split_acc_ld(N) floats apart, choice.hpp); the last
// block of each tile then applies the bias and activation, stores C and zeroes the accumulator for
// the next launch. The accumulator is M x split_acc_ld(N) floats whatever the number of splits, so the
// family's footprint knows it.
#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

DeviceBuffer gemm::split_accumulator(std::int64_t M, std::int64_t N) {
  DeviceBuffer acc(static_cast<std::size_t>(M) * static_cast<std::size_t>(split_acc_ld(N)) * sizeof(float),
                   "GEMM split-K accumulator");
  acc.fill(0);
  return acc;
}

}  // namespace bwprof
