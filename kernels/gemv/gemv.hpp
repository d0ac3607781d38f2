// GEMV y = W.x: host operands, the CPU kernel and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// y[N] = W[N,K] . x[K] (W row-major, as a linear layer's weight), FP32 accumulation.
struct GemvData {
  HostTensor W, x, y;
};
GemvData make_gemv_data(const Problem& p);
void gemv_cpu(GemvData& d, const Problem& p);
Check gemv_check(const GemvData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_gemv_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemv_gpu(Backend&, const Problem&);

}  // namespace bwprof
