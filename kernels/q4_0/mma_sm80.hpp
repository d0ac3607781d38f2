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
// A chunk as one record (its quants, then its scales: the ring kernel's kQ4Records layout).
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
// turns either into q - 8 exactly. LOP3: each mask-and-or as one instruction (q4_and_or): 9
// instructions a word instead of 13, the same bits.
template <bool LOP3 = false>
__device__ __forceinline__ void q4_frag_decode(unsigned w, unsigned (&a)[4]) {
  const __half2 k1032 = __halves2half2(__ushort_as_half(0x6408), __ushort_as_half(0x6408));  // 1032
  const __half2 k16th = __halves2half2(__ushort_as_half(0x2C00), __ushort_as_half(0x2C00));  // 1/16
  const __half2 k72 = __halves2half2(__ushort_as_half(0xD480), __ushort_as_half(0xD480));    // -72
  const unsigned w2 = w >> 8;
  unsigned h[4];
  if (LOP3) {
    h[0] = q4_and_or(w, 0x000F000Fu, 0x64006400u), h[1] = q4_and_or(w, 0x00F000F0u, 0x64006400u);
    h[2] = q4_and_or(w2, 0x000F000Fu, 0x64006400u), h[3] = q4_and_or(w2, 0x00F000F0u, 0x64006400u);
  } else {
    h[0] = (w & 0x000F000Fu) | 0x64006400u, h[1] = (w & 0x00F000F0u) | 0x64006400u;
    h[2] = (w2 & 0x000F000Fu) | 0x64006400u, h[3] = (w2 & 0x00F000F0u) | 0x64006400u;
  }
  __half2 r[4];
  r[0] = __hsub2(*reinterpret_cast<__half2*>(&h[0]), k1032);
  r[1] = __hfma2(*reinterpret_cast<__half2*>(&h[1]), k16th, k72);
  r[2] = __hsub2(*reinterpret_cast<__half2*>(&h[2]), k1032);
  r[3] = __hfma2(*reinterpret_cast<__half2*>(&h[3]), k16th, k72);
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<unsigned*>(&r[i]);
}

__device__ __forceinline__ uint4 load_x_frag(const __half* p) {
  uint4 r;
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

// One thread block per 16-row tile; its WARPS warps split K (warp w takes chunks w, w + WARPS, ...),
// each with U chunks of quants and scales in flight (streamed past L1), and reduce in shared
// memory. XJIT: each chunk's X fragment is loaded just before its mma (fewer live registers,
// higher occupancy) instead of with the quants: on an H200 that was slower (21.1 us against 16.2
// for 14336x4096, 8 warps, 4 chunks), the X loads' latency then paid once per chunk. M <= 8 rows
// of X, row-major, K apart. MINB: blocks an SM must hold (a register cap; 0: none).
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
template <bool LOP3 = false>
__device__ __forceinline__ void q4_frag_chunk(const uint4& qv, const uint2& sv, const uint4 (&xv)[2],
                                              float (&acc)[4]) {
  const unsigned wq[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      unsigned a[4];
      q4_frag_decode<LOP3>(wq[2 * b + i], a);
      q4_word_mma(cf, a, xv[b], i);
    }
    q4_scale_add(acc, cf, b == 0 ? sv.x : sv.y);
  }
}

// The same on a chunk decoded beforehand (a: the A fragments of its 4 words), so that its quants'
// registers can be refilled between the decode and the mma (kQ4EarlyRefill).
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

template <int WARPS, int U, bool XJIT, int MINB = 0>
__global__ void __launch_bounds__(WARPS * 32, MINB) bwprof_q4_0_matmul_mma(const uint4* __restrict__ q,
                                                                     const uint2* __restrict__ sc,
                                                                     const __half* __restrict__ x,
                                                                     __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2;
  const std::size_t tile = blockIdx.x;
  const uint4* qt = q + tile * nch * 32 + lane;
  const uint2* st = sc + tile * nch * 8 + g;
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = warp; c0 < nch; c0 += WARPS * U) {
    uint4 qv[U];
    uint2 sv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c < nch) {
        qv[u] = load_stream(qt + static_cast<std::size_t>(c) * 32);
        sv[u] = load_stream(st + static_cast<std::size_t>(c) * 8);
      }
    }
    uint4 xv[XJIT ? 1 : U][2];
    if (!XJIT) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          const int blk = 2 * (c0 + u * WARPS) + b;
          xv[u][b] = has_x && blk < nb ? load_x_frag(xg + blk * 32) : make_uint4(0, 0, 0, 0);
        }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nch) break;  // the same for the whole warp
      const int xu = XJIT ? 0 : u;
      if (XJIT) {
#pragma unroll
        for (int b = 0; b < 2; ++b)
          xv[0][b] = has_x && 2 * c + b < nb ? load_x_frag(xg + (2 * c + b) * 32) : make_uint4(0, 0, 0, 0);
      }
      q4_frag_chunk(qv[u], sv[u], xv[xu], acc);
    }
  }
  q4_tile_store<WARPS>(part, acc, tile, M, N, y);
#endif
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
// out in rounds. XS: the launch's rows of X (M x K halves) are staged once per block in dynamic
// shared memory by cp.async (q4_x_smem_bytes(M, K); rows padded by 64 bytes, so that two rows' 16-byte
// reads by a warp fall in different banks), which frees the 8 registers a chunk's X fragment would
// hold: 56 registers at U = 4 instead of 98. Otherwise X is loaded with its chunk, in the ring.
// TILES (1 or 2): tiles a block streams one after the other through the same ring (tile-major
// chunks are contiguous), so that a block's start (its X staging, the ring's first loads) and its
// end are paid once for TILES tiles, with half the blocks.
// Measured on an H100 (median of 30, L2 flushed; docs/notes/gemv.md): M = 1
// 14336x4096 18.1 us with bwprof_q4_0_matmul_mma<8, 4>, 17.2 here at 8 warps, 16.6 at 4 warps
// (every block resident at once); 4096x14336 17.9 -> 17.4 (8 warps); M = 8 (X in the ring, U = 2)
// 18.9 -> 18.2. (X fetched before the weights, through L1, or split K over 2-8 blocks a tile were
// all slower on an H100 at 4096x4096 and 14336x4096: gpu-q4-fast at commit e595dcc; split K over
// the records with the lean decode lost again, by 3-4 us at 4096x4096, at commit 2e80c96.)
inline std::size_t q4_x_smem_bytes(int M, std::int64_t K) {
  return static_cast<std::size_t>(M) * static_cast<std::size_t>(K / 8 + 4) * 16;
}
// OPTS of the ring kernel (bits):
//   kQ4Records: the weights as ONE stream of kQ4RecordBytes records, a chunk's 512 quant bytes then
//     its 64 scale bytes (q4_frag_pack with record strides; `sc` unused), instead of the quants and
//     the scales in two arrays read side by side;
//   kQ4Lop3 (lean): the decode's mask-and-or as one LOP3 (q4_frag_decode<true>), 74 instructions a
//     chunk instead of 89 (ring 4x4, sm_90a), and X staged row by row without an integer division;
//   kQ4ProbeLoads, kQ4ProbeMath: PROBES, not kernels (y gets a checksum, not the product: their
//     check fails by design), to split the kernel's time into its memory schedule and its math:
//     ProbeLoads issues the same loads (weights, scales, X) in the same order and skips the decode
//     and the mma; ProbeMath loads only the ring's first round of weights and X and does all the
//     decodes and mma of the tile on them;
//   kQ4EarlyRefill: each chunk decoded first, its quants refilled, then its mma (q4_frag_mma), so
//     that the next round's quants are asked for one mma earlier (H200, session 23, 16 warps x 2:
//     4096x4096 7.33-7.39 us against 7.39-7.46 without, 4096x14336 13.34-13.44 against 13.73-13.86;
//     no gain at 8 warps x 4, and the scales and X refilled early too lost 4-35 %).
enum Q4RingOpts : int { kQ4Records = 1, kQ4Lop3 = 2, kQ4ProbeLoads = 4, kQ4ProbeMath = 8, kQ4EarlyRefill = 16 };
template <int WARPS, int U, bool XS, int TILES = 1, int OPTS = 0>
__global__ void __launch_bounds__(WARPS * 32) bwprof_q4_0_matmul_ring(const uint4* __restrict__ q,
                                                                    const uint2* __restrict__ sc,
                                                                    const __half* __restrict__ x,
                                                                    __half* __restrict__ y, int M, int N, int K) {
  static_assert(TILES == 1 || TILES == 2, "one or two tiles a block");
#if __CUDA_ARCH__ >= 800
  constexpr bool kRec = (OPTS & kQ4Records) != 0, kLop3 = (OPTS & kQ4Lop3) != 0;
  constexpr bool kProbeLoads = (OPTS & kQ4ProbeLoads) != 0, kProbeMath = (OPTS & kQ4ProbeMath) != 0;
  constexpr bool kEarly = (OPTS & kQ4EarlyRefill) != 0;
  // a chunk's quants (uint4) and its scales (uint2) apart
  constexpr int QS = kRec ? kQ4RecordVecs : kQ4QuantVecs, SS = kRec ? 2 * kQ4RecordVecs : 8;
  extern __shared__ uint4 xs[];  // XS: M rows of K / 8 + 4 vectors
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile0 = static_cast<std::size_t>(blockIdx.x) * TILES;
  const std::size_t left = (static_cast<std::size_t>(N) + 15) / 16 - tile0;  // tiles from this block's on
  const int tiles = TILES == 1 || left >= TILES ? TILES : static_cast<int>(left);
  const int nc = tiles * nch;  // the chunks this block streams, tile after tile
  // The chunk of its tile (for X) of the block's chunk c.
  auto in_tile = [nch](int c) { return TILES == 1 || c < nch ? c : c - nch; };
  const uint4* qt = q + tile0 * nch * QS + lane;
  const uint2* st = (kRec ? reinterpret_cast<const uint2*>(q + kQ4QuantVecs) : sc) + tile0 * nch * SS + g;
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
  if (XS) {
    if (kLop3) {  // row by row: no division (about 120 instructions a thread less at K = 4096, 4 warps)
      for (int m = 0; m < M; ++m)
        for (int v = threadIdx.x; v < kv; v += WARPS * 32)
          cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    } else {
      for (int i = threadIdx.x; i < M * kv; i += WARPS * 32) {
        const int m = i / kv, v = i - m * kv;
        cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
      }
    }
    cp_async_commit();
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      q4_load_x(xr[u], xg, in_tile(c), nb, has_x && c < nc);
    }
  }
  if (XS) {
    cp_async_wait<0>();
    __syncthreads();
  }
  const uint4* xsg = xs + (has_x ? g : 0) * (kv + 4) + t;
  float acc[TILES][4];
#pragma unroll
  for (int i = 0; i < TILES; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  for (int c0 = warp; c0 < nc; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nc) break;  // the same for the whole warp
      const int cn = c + U * WARPS, ck = in_tile(c);
      uint4 xv[2];
      if (XS) {
#pragma unroll
        for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * ck + b < nb ? xsg[(2 * ck + b) * 4] : make_uint4(0, 0, 0, 0);
      } else {
        xv[0] = xr[u][0], xv[1] = xr[u][1];
      }
      if (kEarly && !kProbeLoads && !kProbeMath) {  // decode, refill the quants, then the mma
        unsigned a[4][4];
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) q4_frag_decode<kLop3>(wq[i], a[i]);
        const bool next = cn < nc;
        load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * QS, next);
        if (TILES == 1 || c < nch) {
          q4_frag_mma(a, sv[u], xv, acc[0]);
        } else {
          q4_frag_mma(a, sv[u], xv, acc[TILES - 1]);
        }
        if (!XS) q4_load_x(xr[u], xg, in_tile(cn), nb, has_x && next);
        load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * SS, next);
        continue;
      }
      if (kProbeLoads) {  // every loaded word into a checksum that keeps the loads
        const unsigned h = qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sv[u].x ^ sv[u].y ^ xv[0].x ^ xv[0].y ^ xv[0].z ^
                           xv[0].w ^ xv[1].x ^ xv[1].y ^ xv[1].z ^ xv[1].w;
        acc[0][0] += __uint_as_float(h & 0x007fffffu);
      } else if (TILES == 1 || c < nch) {
        q4_frag_chunk<kLop3>(qv[u], sv[u], xv, acc[0]);
      } else {
        q4_frag_chunk<kLop3>(qv[u], sv[u], xv, acc[TILES - 1]);
      }
      const bool next = cn < nc && !kProbeMath;  // (the math probe keeps its first round's data)
      if (!XS) q4_load_x(xr[u], xg, in_tile(cn), nb, has_x && next);
      load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * QS, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * SS, next);
    }
  }
#pragma unroll
  for (int i = 0; i < TILES; ++i) {
    if (i >= tiles) break;  // the same for the whole block
    if (i > 0) __syncthreads();  // the previous tile's partial sums are read before they are overwritten
    q4_tile_store<WARPS>(part, acc[i], tile0 + i, M, N, y);
  }
#endif
}

// One row of X in one round (the "flood"): a block per 16-row tile whose 32 warps take two adjacent
// chunks each, so that every byte of a tile up to K = 4096 is asked for at once, and the SM's 64
// warps (two blocks), not one warp's program order, decide which chunk is computed next. The
// registers allow it (at most 32 a thread, no spill): only the output column that M = 1 stores is
// accumulated, and a chunk's scales are one word a lane (lane 4 g + b holds the record's scale word
// 2 g + b: rows g and g + 8 of Q4 block b), shuffled within groups of 4 lanes. Each warp's X (one
// word a lane a chunk, asked for with the weights, through L1) goes through the warp's own shared
// memory, so that X never waits for the rest of the block. H200, session 24 (docs/notes/gemv.md,
// round 11; before/after in docs/BENCHMARKS.md): 4096x4096 7.46 -> 6.75-6.82 us, 8-11 % faster at
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
      q4_frag_decode<true>(wq[2 * b + i], a);
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
