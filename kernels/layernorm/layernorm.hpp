// Layer norm over rows: host tensors, the CPU kernel and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

constexpr float kLayerNormEps = 1e-5f;
struct LayerNormData {
  HostTensor x, weight, bias, y;
};
LayerNormData make_layernorm_data(const Problem& p);
void layernorm_cpu(LayerNormData& d, const Problem& p);
Check layernorm_check(const LayerNormData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_layernorm_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_layernorm_gpu(Backend&, const Problem&);

}  // namespace bwprof
