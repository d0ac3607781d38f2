// Q4_0 (llama.cpp's 4-bit blocks): quantization, host data, the CPU kernels and the gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// llama.cpp's block: an FP16 scale, then 16 bytes holding 32 4-bit values (element j in the low
// nibble of byte j, element j + 16 in the high nibble); value = (q - 8) * scale.
constexpr int kQ4Block = 32;
constexpr int kQ4BlockBytes = 18;
void q4_0_quantize_row(const float* x, std::int64_t n, std::uint8_t* out);
void q4_0_dequantize_row(const std::uint8_t* q, std::int64_t n, float* out);

struct Q4DequantData {
  HostBytes q;  // rows * cols / 32 blocks
  HostTensor out;
};
Q4DequantData make_q4_dequant_data(const Problem& p);
void q4_dequant_cpu(Q4DequantData& d, const Problem& p);
Check q4_dequant_check(const Q4DequantData& d, const Problem& p);

struct Q4MatmulData {
  HostTensor X, Y;
  HostBytes W;  // N rows of K/32 blocks
};
Q4MatmulData make_q4_matmul_data(const Problem& p);
void q4_matmul_cpu(Q4MatmulData& d, const Problem& p);
Check q4_matmul_check(const Q4MatmulData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_q4_0_dequant_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_dequant_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_matmul_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend&, const Problem&);

}  // namespace bwprof
