// Factories of the CPU backend's kernel instances (registered in cpp/src/core/families.cpp).
#pragma once
#include <memory>

#include "bwprof/kernel.hpp"

namespace bwprof {

std::unique_ptr<KernelInstance> make_stream_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemm_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_qkv_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_attention_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_kv_cache_append_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_dequant_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_matmul_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_layernorm_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_bias_act_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemv_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_intensity_sweep_cpu(Backend&, const Problem&);

}  // namespace bwprof
