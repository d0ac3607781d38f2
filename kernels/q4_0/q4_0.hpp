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

// The tensor-core tiled matmul's ring kernel for 1 or 2 rows of X (matmul_mma_sm80.hip), named as
// its BWPROF_Q4_KERNEL knob, from the grid's fill: `tiles` 16-row tiles (one block each), `sms`
// SMs, `resident4` blocks of the 4-warp kernel that fit on the GPU at once, K the row length.
//   "ring4x4"  (4 warps, X in shared memory) where every block is resident and there are at least
//              16 warps an SM (H100, 14336x4096: 16.5 us, the fastest of 12 candidates);
//   "ringx8x4" (8 warps, X in registers) where 4 warps a tile leave the SMs under-filled (fewer than
//              16 warps an SM) and K <= 4096 (H100, 4096x4096: 8.54 us against 8.83 for ring8x4);
//   "ring8x4"  (8 warps, X in shared memory) otherwise (H100, 4096x14336: 17.4 us against 20.9 for
//              ring4x4; ringx8x4 was not measured at that K, so it is not chosen there).
inline const char* q4_ring_choice(std::int64_t tiles, std::int64_t sms, std::int64_t resident4, std::int64_t K) {
  const bool fills = 4 * tiles >= 16 * sms;
  if (fills && tiles <= resident4) return "ring4x4";
  if (!fills && K <= 4096) return "ringx8x4";
  return "ring8x4";
}

}  // namespace bwprof
