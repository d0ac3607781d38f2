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
// SMs, K the row length, M the rows of X (1 or 2), `ringx_per_sm`, `ring16_per_sm` and
// `flood_per_sm` the blocks of "ringx8x4rl", "ring16x2rle" and "flood32x2" an SM holds at once (the
// runtime's occupancy answers: 2, 2 and 2 on sm_90, at 96, 57 and 32 registers a thread). Every
// answer reads the weights as one stream of records with the lean (one-LOP3) decode (mma_sm80.hpp's
// kQ4Records | kQ4Lop3):
//   "flood32x2"  (32 warps, 2 chunks a warp in one round: bwprof_q4_0_matvec_flood) for one row of X
//                with K <= 4096 and at most 1.25 waves of its blocks (H200, session 24, one call, 3
//                passes, against the choice below: 4096x4096 6.75-6.82 us against 7.46, 512-4224 rows
//                at K = 4096 8.5-11 % faster, K = 2048-4064 at 4096 rows 9-11 %, 1024 and 2048 rows at
//                K = 2048 5-7 %; equal at K = 1024: -0.6 % at 4096 rows, +0.7 % at 1024. Past one wave,
//                forced by its knob against the rule's ring8x4rl in another call: 4240-5120 rows 3-4.5 %
//                faster at K = 4096, 2-3 % at K = 2048; from 1.33 waves mixed: 5632 rows -2 %, 6144 rows
//                0 % and at K = 2048 +3 %, 7168 and 8192 rows -3 %, 11008 +1.6 %, 14336 +4 %);
//   "ring16x2rle" (16 warps, 2 chunks a warp, X in shared memory, each chunk's quants refilled
//                between its decode and its mma: kQ4EarlyRefill) for one row of X where every tile's
//                block of it is resident at once and K > 4096 (H200, session 23, 3 passes, against
//                the choice below: 512-4224 rows at K = 4096 1-4 % faster, 4096x4096 7.33-7.39 us
//                against 7.49-7.62; 4096 rows at K = 5120-16384 3-7 %; 1024-4224 rows at K = 14336
//                7-11 %. It lost at K <= 3584, +2 to +6 % at 4096 rows; at M = 2, +1-3 %; and past one
//                wave, where ring8x4rl was 8-10 % faster at 4240 and 5120 rows);
//   "ringx8x4rl" (8 warps, X in registers) where 4 warps a tile would leave the SMs under-filled
//                (fewer than 16 warps an SM), yet there are more than 1.25 tiles an SM, every tile's
//                block is resident at once, and K <= 4096 (H100, 4096x4096, gpu-q4-fast at 75fba84:
//                8.22 / 8.22 us, the fastest of 16 candidates; the previous choice ringx8x4 8.48 / 8.38).
//                With 1.25 tiles an SM or fewer, X in shared memory was ahead on an H200 (session 20,
//                K = 4096, 3 passes: M = 1, 512-2560 rows, ring8x4rl 2.1-6.6 % faster, 1024 rows 5.89
//                against 6.30 us; M = 2 up to 2112 rows 2.6-4.5 %, 2128-2560 within 0.2 %; ringx8x4rl
//                ahead from 192 tiles, 1.45 an SM: +0.4 and +2.8 %, and at 4096 rows +0.8 and +5.0 %).
//                Past one wave of it (more tiles than ringx_per_sm x sms) its second wave cost 11-19 %
//                on an H200 (session 22, K = 4096, 3 passes, M = 1: 5120 rows 10.43-10.48 us against
//                8.58-8.61 for ring8x4rl, 6144 rows 10.72-10.77 against 8.74, 8192 rows 11.39-11.42
//                against 10.00-10.08; M = 2: 5-15 %);
//   "ring8x4rl"  (8 warps, X in shared memory) otherwise (H100, 14336x4096, same run: 15.81 /
//                15.86 us, the fastest of 16; the previous choice ring4x4 16.50 / 16.53, ring4x4l
//                15.87 / 16.02; ring8x4 had been chosen for 4096x14336, 17.4 us against 20.9 for
//                ring4x4, and its lean records form is not measured there).
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
