// Factories of the GPU kernels (kernels/*.hip), registered in cpp/src/core/families.cpp.
// Plain C++: no GPU headers, so code compiled without a GPU compiler can include it.
#pragma once
#include <memory>

#include "bwprof/kernel.hpp"

namespace bwprof {

std::unique_ptr<KernelInstance> make_stream_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_layernorm_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_bias_act_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_kv_cache_append_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_dequant_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemv_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemm_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_qkv_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_attention_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_intensity_sweep_gpu(Backend&, const Problem&);

// GFLOP/s of independent FMA chains on every SM (FP32 FFMA or FP16 HFMA2): the vector roof.
double gpu_fma_chain_gflops(Backend& gpu, DType dtype);

}  // namespace bwprof
