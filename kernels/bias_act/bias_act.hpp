// Bias + activation: host tensors, the CPU kernel and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

struct BiasActData {
  HostTensor x, bias, y;
};
BiasActData make_bias_act_data(const Problem& p);
void bias_act_cpu(BiasActData& d, const Problem& p);
Check bias_act_check(const BiasActData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_bias_act_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_bias_act_gpu(Backend&, const Problem&);

}  // namespace bwprof
