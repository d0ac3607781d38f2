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

// The tensor-core tiled matmul's kernel for 1 or 2 rows of X (matmul_mma_sm80.hip), from the grid's
// fill: `tiles` 16-row tiles (one block each), `sms` SMs, K the row length, M the rows of X (1 or
// 2); `ringx_per_sm`, `ring16_per_sm`, `flood_per_sm`: the blocks of ringx8x4rl, ring16x2rle and
// flood32x2 an SM holds at once (the runtime's occupancy answers: 2, 2 and 2 on sm_90). Each answer
// the fastest where it is taken on the H100 and H200 sweeps (docs/notes/gemv.md#q4-choice; tests/cpp/q4_0_test.cpp pins
// them):
//   flood32x2    one row of X, K <= 4096, at most 1.25 waves of its blocks: every chunk of a tile
//                asked for at once;
//   ring16x2rle  one row of X, K > 4096 (or 4096 where the flood does not fit), its whole grid
//                resident at once;
//   ringx8x4rl   X in registers where 4 warps a tile would leave the SMs under-filled, with more
//                than 1.25 tiles an SM, in one wave, K <= 4096;
//   ring8x4rl    X in shared memory otherwise.
inline const char* q4_ring_choice(std::int64_t tiles, std::int64_t sms, std::int64_t K, std::int64_t M,
                                  std::int64_t ringx_per_sm, std::int64_t ring16_per_sm, std::int64_t flood_per_sm) {
  if (M == 1 && K <= 4096 && 4 * tiles <= 5 * flood_per_sm * sms) return "flood32x2";
  if (M == 1 && K >= 4096 && tiles <= ring16_per_sm * sms) return "ring16x2rle";  // (K = 4096: where the flood does not fit)
  const bool fills = 4 * tiles >= 16 * sms, spread = 4 * tiles > 5 * sms;
  const bool one_wave = tiles <= ringx_per_sm * sms;
  if (!fills && spread && one_wave && K <= 4096) return "ringx8x4rl";
  return "ring8x4rl";
}

}  // namespace bwprof
