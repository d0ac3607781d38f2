// The `tensor` GEMM's choices that are plain arithmetic on the shape, shared by dispatch.hip (which
// engine runs) and family.cpp (the footprint of what it allocates), so that the two agree; no GPU
// headers, the CPU-only build compiles it too.
#pragma once
#include <algorithm>
#include <cstdint>

namespace bwprof {
namespace gemm {

// A few rows of A (M <= kSmallRows): the GEMM is reading B, whatever its size (at most 64 flops a
// 2-byte element of B, far under the matrix units' ~300 flops a byte of DRAM bandwidth on an H100),
// so the NVIDIA dispatch takes a kernel built around B's stream. One row (a GEMV): the skinny
// kernel (skinny.hip, the vector units); 2 to kSmallRows rows: the skinny tensor kernel
// (skinny_mma.hip, mma.sync on N x M, whose cost does not grow with M the way the vector units'
// does). The skinny kernel takes up to kSkinnyMaxRows on request (BWPROF_GEMM_TILE=gemv), and the
// skinny tensor kernel one row (BWPROF_GEMM_TILE=tc_skinny), for comparisons.
constexpr int kSkinnyRows = 1, kSkinnyMaxRows = 64, kSmallRows = 64;

// A leading dimension padded so that rows start on 16 bytes (8 two-byte elements).
inline std::int64_t pad_ld(std::int64_t n) { return (n + 7) / 8 * 8; }

// Whether copying the misaligned operands into padded scratch (pad.hip) and running wgmma on the
// copies beats running mma.sync on them in place, by estimates in microseconds on an H100:
//   pad    bytes read and written by the copies at 2.5 TB/s, plus 3 us a copy launch;
//   wgmma  the longer of its FLOPs at 400 TFLOP/s and its operands at 2.8 TB/s;
//   mma    the longer of its FLOPs at 55 TFLOP/s and its operands at 0.4 TB/s, what mma.sync
//          reached on unaligned rows (H100: M=8192 N=4097 K=4095 in 5005 us; M=16 N=11007
//          K=4096 and M=33 N=11009 K=1000 read B at 0.4-0.45 TB/s).
// Pad where pad + wgmma < mma. pad_a / pad_b: which operands need the copy.
inline double pad_us(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b) {
  const double a = pad_a ? 4.0 * M * K : 0.0, b = pad_b ? 4.0 * K * N : 0.0;
  return (a + b) / 2.5e6 + 3.0 * (int(pad_a) + int(pad_b));
}
inline bool pad_pays(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b) {
  if (!pad_a && !pad_b) return false;
  const double flops = 2.0 * M * N * K, bytes = 2.0 * (double(M) * K + double(K) * N + double(M) * N);
  const double wgmma = std::max(flops / 400e6, bytes / 2.8e6), mma = std::max(flops / 55e6, bytes / 0.4e6);
  return pad_us(M, N, K, pad_a, pad_b) + wgmma < mma;
}
// The scratch the copies take, in bytes, where the GEMM of a family instance (lda = K, ldb = N,
// 16-byte aligned buffers) would pad; 0 where it would not.
inline double pad_scratch_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  const bool pad_a = K % 8 != 0, pad_b = N % 8 != 0;
  if (M <= kSmallRows || !pad_pays(M, N, K, pad_a, pad_b)) return 0.0;
  return (pad_a ? 2.0 * M * pad_ld(K) : 0.0) + (pad_b ? 2.0 * K * pad_ld(N) : 0.0);
}

// wgmma's split K (wgmma_sm90.hip): a buffer of FP32 sums for every output tile (the tiles cover
// at most M and N rounded up to 128 and 256) and a counter a tile (at most one per 64 x 64), where
// it splits; at most kWgmmaMaxSplits blocks a tile.
constexpr int kWgmmaMaxSplits = 32;
inline double wgmma_split_bytes(std::int64_t M, std::int64_t N) {
  return 4.0 * double((M + 127) / 128 * 128) * double((N + 255) / 256 * 256) +
         4.0 * double((M + 63) / 64) * double((N + 63) / 64);
}

// Everything the `tensor` GEMM allocates beside A, B, C and the bias, an upper bound: one engine
// runs; up to kSmallRows rows the skinny kernels' FP32 accumulator [M, N] and their tile counters
// (skinny.hip: one int per 8 rows x 248 columns or more; skinny_mma.hip: one per 128 columns),
// else the larger of mma.sync's accumulator [M, N] and wgmma's tile sums (held where K is split:
// counted always); plus the padded copies (which wgmma then reads).
inline double tensor_scratch_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  if (M <= kSmallRows)
    return 4.0 * M * N + 4.0 * double(std::max((M + 7) / 8 * ((N + 247) / 248), (N + 127) / 128));
  return std::max(4.0 * M * N, wgmma_split_bytes(M, N)) + pad_scratch_bytes(M, N, K);
}

}  // namespace gemm
}  // namespace bwprof
