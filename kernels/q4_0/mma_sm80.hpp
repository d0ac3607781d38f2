// Q4_0 matrix-vector / small-batch product on NVIDIA matrix units (mma.sync m16n8k16, sm_80+),
// over bwprof's fragment-ordered re-packing of the weights (used by matmul_mma_sm80.hip).
//
// Why: the scalar kernel spends ~4.5 instructions per weight (decode, convert X, FMA), which on the
// H100 is as long as reading the weights, and needs 93 registers (25% occupancy). Here W is the
// mma's A operand (16 rows x 16 k, exact q - 8 in FP16), up to 8 rows of X its B operand, FP32
// accumulation: about one instruction per weight, the same for M = 1 and M = 8.
//
// Layout, per tile of 16 rows and chunk of 64 k (two Q4 blocks b = 0, 1):
//   quants: 32 lanes x 16 bytes. Lane (g = lane / 4, t = lane % 4) word s = 2 b + i holds, as
//     nibbles 0..7, the quants of rows (g, g+8, g, g+8, g, g+8, g, g+8) at elements
//     (e, e, e+2, e+2, e+1, e+1, e+3, e+3) of block b, e = 8 t + 4 i: the A fragment of one mma.
//   scales: 8 x 8 bytes. Entry g: d of (row g, b 0), (g+8, b 0), (g, b 1), (g+8, b 1).
// Rows past N and blocks past K/32 are zero quants with zero scales. X row g (the mma's column g)
// supplies elements 32 b + 8 t .. + 7 of block b, so k is permuted the same way in A and B.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "common/gpu_stream_load.hpp"

namespace bwprof {
namespace gpu {

constexpr int kQ4TileRows = 16;
constexpr int kQ4ChunkK = 64;

// Sizes of the re-packed arrays (bytes) for an N x K matrix (K a multiple of 32).
inline std::size_t q4_frag_tiles(std::int64_t N) { return static_cast<std::size_t>((N + 15) / 16); }
inline std::size_t q4_frag_chunks(std::int64_t K) { return static_cast<std::size_t>((K / 32 + 1) / 2); }
inline std::size_t q4_frag_quant_bytes(std::int64_t N, std::int64_t K) { return q4_frag_tiles(N) * q4_frag_chunks(K) * 512; }
inline std::size_t q4_frag_scale_bytes(std::int64_t N, std::int64_t K) { return q4_frag_tiles(N) * q4_frag_chunks(K) * 64; }
// A chunk as one record (its quants, then its scales: the layout the kernels read).
constexpr std::size_t kQ4RecordBytes = 512 + 64;
// The same in 16-byte vectors, as the kernels index a record: its quants, then its scales from vector 32.
constexpr int kQ4RecordVecs = static_cast<int>(kQ4RecordBytes / 16), kQ4QuantVecs = 512 / 16;

// Re-packs tiles [tile_lo, tile_hi) of llama.cpp's row layout (18-byte blocks) into the layout above:
// chunk i's 512 quant bytes at quants + i * quant_stride, its 64 scale bytes at scales + i *
// scale_stride (two arrays: strides 512 and 64; one stream of records: both kQ4RecordBytes, with
// scales = quants + 512).
inline void q4_frag_pack(const std::uint8_t* w, std::int64_t N, std::int64_t K, std::size_t tile_lo, std::size_t tile_hi,
                         std::uint8_t* quants, std::uint8_t* scales, std::size_t quant_stride = 512,
                         std::size_t scale_stride = 64) {
  const std::int64_t nb = K / 32;
  const std::size_t nch = q4_frag_chunks(K);
  auto quant = [&](std::int64_t n, std::int64_t blk, int e) -> unsigned {
    if (n >= N || blk >= nb) return 0;
    const std::uint8_t* q = w + (n * nb + blk) * 18 + 2;
    return e < 16 ? q[e] & 15u : q[e - 16] >> 4;
  };
  auto scale = [&](std::int64_t n, std::int64_t blk) -> std::uint16_t {
    std::uint16_t d = 0;
    if (n < N && blk < nb) std::memcpy(&d, w + (n * nb + blk) * 18, 2);
    return d;
  };
  for (std::size_t tile = tile_lo; tile < tile_hi; ++tile) {
    for (std::size_t c = 0; c < nch; ++c) {
      std::uint8_t* qo = quants + (tile * nch + c) * quant_stride;
      for (int lane = 0; lane < 32; ++lane) {
        const std::int64_t r0 = static_cast<std::int64_t>(tile) * 16 + lane / 4, r1 = r0 + 8;
        const int t = lane % 4;
        for (int s = 0; s < 4; ++s) {
          const std::int64_t blk = 2 * static_cast<std::int64_t>(c) + s / 2;
          const int e = 8 * t + 4 * (s % 2);
          const unsigned nib[8] = {quant(r0, blk, e),     quant(r1, blk, e),     quant(r0, blk, e + 2),
                                   quant(r1, blk, e + 2), quant(r0, blk, e + 1), quant(r1, blk, e + 1),
                                   quant(r0, blk, e + 3), quant(r1, blk, e + 3)};
          std::uint32_t word = 0;
          for (int p = 0; p < 8; ++p) word |= nib[p] << (4 * p);
          std::memcpy(qo + lane * 16 + s * 4, &word, 4);
        }
      }
      std::uint16_t* so = reinterpret_cast<std::uint16_t*>(scales + (tile * nch + c) * scale_stride);
      for (int g = 0; g < 8; ++g) {
        const std::int64_t r0 = static_cast<std::int64_t>(tile) * 16 + g;
        const std::uint16_t d[4] = {scale(r0, 2 * c), scale(r0 + 8, 2 * c), scale(r0, 2 * c + 1), scale(r0 + 8, 2 * c + 1)};
        std::memcpy(so + 4 * g, d, 8);
      }
    }
  }
}

#if defined(BWPROF_CUDA)
// (w & mask) | o in one LOP3: written as C++ the compiler emits an AND then an OR, since an
// instruction takes one 32-bit immediate and both constants are immediates.
__device__ __forceinline__ unsigned q4_and_or(unsigned w, unsigned mask, unsigned o) {
  unsigned r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "r"(mask), "r"(o));
  return r;
}

// The four A fragments of one mma from one word: nibbles 0|4, 1|5, 2|6, 3|7 (low|high half).
// 0x6400 | q is the half 1024 + q and 0x6400 | q << 4 is 1024 + 16 q: one subtraction or one FMA
// turns either into q - 8 exactly. Each mask-and-or as one LOP3 (q4_and_or): 9 instructions a word
// instead of 13, the same bits.
__device__ __forceinline__ void q4_frag_decode(unsigned w, unsigned (&a)[4]) {
  const __half2 k1032 = __halves2half2(__ushort_as_half(0x6408), __ushort_as_half(0x6408));  // 1032
  const __half2 k16th = __halves2half2(__ushort_as_half(0x2C00), __ushort_as_half(0x2C00));  // 1/16
  const __half2 k72 = __halves2half2(__ushort_as_half(0xD480), __ushort_as_half(0xD480));    // -72
  const unsigned w2 = w >> 8;
  unsigned h[4];
  h[0] = q4_and_or(w, 0x000F000Fu, 0x64006400u), h[1] = q4_and_or(w, 0x00F000F0u, 0x64006400u);
  h[2] = q4_and_or(w2, 0x000F000Fu, 0x64006400u), h[3] = q4_and_or(w2, 0x00F000F0u, 0x64006400u);
  __half2 r[4];
  r[0] = __hsub2(*reinterpret_cast<__half2*>(&h[0]), k1032);
  r[1] = __hfma2(*reinterpret_cast<__half2*>(&h[1]), k16th, k72);
  r[2] = __hsub2(*reinterpret_cast<__half2*>(&h[2]), k1032);
  r[3] = __hfma2(*reinterpret_cast<__half2*>(&h[3]), k16th, k72);
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<unsigned*>(&r[i]);
}

// acc += one Q4 block's mma sums cf times its scales sw (a half2: rows g, g + 8).
__device__ __forceinline__ void q4_scale_add(float (&acc)[4], const float (&cf)[4], unsigned sw) {
  const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
  acc[0] += d.x * cf[0];
  acc[1] += d.x * cf[1];
  acc[2] += d.y * cf[2];
  acc[3] += d.y * cf[3];
}

// cf += one word's A fragments a times X's fragment of its Q4 block xb (i: the block's first or
// second 16 k).
__device__ __forceinline__ void q4_word_mma(float (&cf)[4], const unsigned (&a)[4], const uint4& xb, int i) {
  const unsigned bf[2] = {i == 0 ? xb.x : xb.z, i == 0 ? xb.y : xb.w};
  mma_16816(cf, a, bf);
}

// One chunk's 4 mma (two Q4 blocks of 32 k) into acc, with the chunk's scales applied; each word
// decoded just before its mma.
__device__ __forceinline__ void q4_frag_chunk(const uint4& qv, const uint2& sv, const uint4 (&xv)[2],
                                              float (&acc)[4]) {
  const unsigned wq[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      unsigned a[4];
      q4_frag_decode(wq[2 * b + i], a);
      q4_word_mma(cf, a, xv[b], i);
    }
    q4_scale_add(acc, cf, b == 0 ? sv.x : sv.y);
  }
}

// The same on a chunk decoded beforehand (a: the A fragments of its 4 words), so that its quants'
// registers can be refilled between the decode and the mma (the ring kernel's EARLY).
__device__ __forceinline__ void q4_frag_mma(const unsigned (&a)[4][4], const uint2& sv, const uint4 (&xv)[2],
                                            float (&acc)[4]) {
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 2; ++i) q4_word_mma(cf, a[2 * b + i], xv[b], i);
    q4_scale_add(acc, cf, b == 0 ? sv.x : sv.y);
  }
}

// The block's warps' partial sums of one 16-row tile, added up and stored: y[m, tile * 16 + row].
template <int WARPS>
__device__ __forceinline__ void q4_tile_store(float4* part, const float (&acc)[4], std::size_t tile, int M, int N,
                                              __half* __restrict__ y) {
  part[threadIdx.x] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  __syncthreads();
  if (threadIdx.x < 128) {  // output (row, column) of lane ln's element j, summed over the warps
    const int ln = threadIdx.x / 4, j = threadIdx.x % 4;
    const float* pf = reinterpret_cast<const float*>(part);
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += pf[w * 128 + threadIdx.x];
    const int row = (ln >> 2) + 8 * (j >> 1), m = 2 * (ln & 3) + (j & 1);
    const std::size_t n = tile * 16 + row;
    if (m < M && n < static_cast<std::size_t>(N)) y[static_cast<std::size_t>(m) * N + n] = __float2half_rn(s);
  }
}

// The X fragment of chunk c for this lane (zeros for rows of X past M and blocks past K / 32).
__device__ __forceinline__ void q4_load_x(uint4 (&xv)[2], const __half* xg, int c, int nb, bool has_x) {
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    xv[b] = make_uint4(0, 0, 0, 0);
    load_cached_if(xv[b], xg + (2 * c + b) * 32, has_x && 2 * c + b < nb);
  }
}

// Block per tile, software-pipelined: warp w streams chunks w, w + WARPS, ... of the tile through a
// ring of U chunks (predicated loads): after a chunk's mma it loads the chunk U steps ahead into the
// registers that chunk used, so a warp's loads stay in flight while it computes instead of going
// out in rounds. The weights come as ONE stream of kQ4RecordBytes records (a chunk's 512 quant bytes
// then its 64 scale bytes: q4_frag_pack with record strides; `sc` is unused, the launch's signature
// being every Q4 kernel's). XS: the launch's rows of X (M x K halves) are staged once per block in
// dynamic shared memory by cp.async, row by row (q4_x_smem_bytes(M, K); rows padded by 64 bytes, so
// that two rows' 16-byte reads by a warp fall in different banks), which frees the 8 registers a
// chunk's X fragment would hold. Otherwise X is loaded with its chunk, in the ring. EARLY: each
// chunk decoded first, its quants refilled, then its mma (q4_frag_mma), so that the next round's
// quants are asked for one mma earlier. The measurements behind these are in docs/notes/gemv.md.
inline std::size_t q4_x_smem_bytes(int M, std::int64_t K) {
  return static_cast<std::size_t>(M) * static_cast<std::size_t>(K / 8 + 4) * 16;
}
template <int WARPS, int U, bool XS, bool EARLY>
__global__ void __launch_bounds__(WARPS * 32) bwprof_q4_0_matmul_ring(const uint4* __restrict__ q,
                                                                    const uint2* __restrict__ /* sc */,
                                                                    const __half* __restrict__ x,
                                                                    __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800
  // a chunk's quants (uint4) and its scales (uint2) apart
  constexpr int QS = kQ4RecordVecs, SS = 2 * kQ4RecordVecs;
  extern __shared__ uint4 xs[];  // XS: M rows of K / 8 + 4 vectors
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile0 = static_cast<std::size_t>(blockIdx.x);
  const int nc = nch;  // the chunks of this block's tile
  const uint4* qt = q + tile0 * nch * QS + lane;
  const uint2* st = reinterpret_cast<const uint2*>(q + kQ4QuantVecs) + tile0 * nch * SS + g;
  const bool has_x = g < M;
  uint4 qv[U], xr[XS ? 1 : U][2];
  uint2 sv[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS;
    load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * QS, c < nc);
    load_stream_if(sv[u], st + static_cast<std::size_t>(c) * SS, c < nc);
  }
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  if (XS) {  // row by row: no division (about 120 instructions a thread less at K = 4096, 4 warps)
    for (int m = 0; m < M; ++m)
      for (int v = threadIdx.x; v < kv; v += WARPS * 32)
        cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    cp_async_commit();
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      q4_load_x(xr[u], xg, c, nb, has_x && c < nc);
    }
  }
  if (XS) {
    cp_async_wait<0>();
    __syncthreads();
  }
  const uint4* xsg = xs + (has_x ? g : 0) * (kv + 4) + t;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = warp; c0 < nc; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nc) break;  // the same for the whole warp
      const int cn = c + U * WARPS;
      uint4 xv[2];
      if (XS) {
#pragma unroll
        for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * c + b < nb ? xsg[(2 * c + b) * 4] : make_uint4(0, 0, 0, 0);
      } else {
        xv[0] = xr[u][0], xv[1] = xr[u][1];
      }
      if (EARLY) {  // decode, refill the quants, then the mma
        unsigned a[4][4];
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) q4_frag_decode(wq[i], a[i]);
        const bool next = cn < nc;
        load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * QS, next);
        q4_frag_mma(a, sv[u], xv, acc);
        if (!XS) q4_load_x(xr[u], xg, cn, nb, has_x && next);
        load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * SS, next);
        continue;
      }
      q4_frag_chunk(qv[u], sv[u], xv, acc);
      const bool next = cn < nc;
      if (!XS) q4_load_x(xr[u], xg, cn, nb, has_x && next);
      load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * QS, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * SS, next);
    }
  }
  q4_tile_store<WARPS>(part, acc, tile0, M, N, y);
#endif
}

// One row of X in one round (the "flood"): a block per 16-row tile whose 32 warps take two adjacent
// chunks each, so that every byte of a tile up to K = 4096 is asked for at once, and the SM's 64
// warps (two blocks), not one warp's program order, decide which chunk is computed next. The
// registers allow it (at most 32 a thread, no spill): only the output column that M = 1 stores is
// accumulated, and a chunk's scales are one word a lane (lane 4 g + b holds the record's scale word
// 2 g + b: rows g and g + 8 of Q4 block b), shuffled within groups of 4 lanes. Each warp's X (one
// word a lane a chunk, asked for with the weights, through L1) goes through the warp's own shared
// memory, so that X never waits for the rest of the block. H200, 2026-11-29
// (docs/notes/gemv.md#q4-flood): 4096x4096 7.46 -> 6.75-6.82 us, 8-11 % faster at
// 512-4224 rows and at K = 2048-4064, equal at K = 1024. In the round's harness, the X fragments
// shuffled out of the registers instead of read from shared memory cost 0.03-0.09 us at 4096x4096,
// and the block's sum by 16 threads instead of warp 0's 32 lanes 0.03-0.10.
// Only M = 1 and K <= 64 * 2 * WARPS: the caller's to ensure (MmaMatmul picks it only there).
__device__ __forceinline__ void q4_row_chunk(const uint4& qv, unsigned sc, const uint4* xs, float& acc0, float& acc2) {
  const unsigned wq[4] = {qv.x, qv.y, qv.z, qv.w};
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
    const uint4 xv = xs[4 * b + t];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      unsigned a[4];
      q4_frag_decode(wq[2 * b + i], a);
      q4_word_mma(cf, a, xv, i);
    }
    const unsigned sw = __shfl_sync(0xffffffffu, sc, b, 4);  // lane 4 g + b: rows g, g + 8
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <int WARPS>
__global__ void __launch_bounds__(WARPS * 32, 2) bwprof_q4_0_matvec_flood(const uint4* __restrict__ q,
                                                                        const uint2* __restrict__,
                                                                        const __half* __restrict__ x,
                                                                        __half* __restrict__ y, int, int N, int K) {
  static_assert(WARPS % 8 == 0 && WARPS <= 32, "whole groups of four warps a half, at most 1024 threads");
#if __CUDA_ARCH__ >= 800
  __shared__ float part[WARPS * 16];  // each warp's sums of the tile's 16 rows
  __shared__ uint4 xs[WARPS * 16];    // each warp's X: 2 chunks of 8 vectors
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, c0 = 2 * warp;
  float acc0 = 0.f, acc2 = 0.f;  // rows g and g + 8 (the mma's column 0)
  if (c0 < nch) {
    const uint4* rec = q + (static_cast<std::size_t>(blockIdx.x) * nch + c0) * kQ4RecordVecs;
    uint4 qv[2];
    unsigned sc[2] = {0u, 0u}, xw[2] = {0u, 0u};
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const bool ok = c0 + u < nch;
      const uint4* r = rec + u * kQ4RecordVecs;
      load_stream_if(qv[u], r + lane, ok);
      load_stream_if(sc[u], reinterpret_cast<const unsigned*>(r + kQ4QuantVecs) + 2 * g + (t & 1), ok && t < 2);
    }
    const unsigned* xg = reinterpret_cast<const unsigned*>(x) + 32 * c0 + lane;  // word `lane` of chunk c0
#pragma unroll
    for (int u = 0; u < 2; ++u) load_cached_if(xw[u], xg + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
    uint4* xw_s = xs + warp * 16;
#pragma unroll
    for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xw_s + 8 * u)[lane] = xw[u];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < 2; ++u)
      if (c0 + u < nch) q4_row_chunk(qv[u], sc[u], xw_s + 8 * u, acc0, acc2);
  }
  if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
  __syncthreads();
  // The tile's 16 sums by warp 0: lane l adds row l % 16 over half of the warps (four running sums,
  // not one chain of adds), then the two halves meet by a shuffle.
  if (threadIdx.x < 32) {
    const int row = threadIdx.x & 15, w0 = (threadIdx.x >> 4) * (WARPS / 2);
    float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS / 2; ++w) s[w & 3] += part[(w0 + w) * 16 + row];
    float sum = (s[0] + s[1]) + (s[2] + s[3]);
    sum += __shfl_xor_sync(0xffffffffu, sum, 16);
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + row;
    if (threadIdx.x < 16 && n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(sum);
  }
#endif
}
#endif  // BWPROF_CUDA

}  // namespace gpu
}  // namespace bwprof
