// Round 11 of the Q4_0 GEMV study (docs/notes/gemv.md), a standalone harness kept in history only
// (grown from round 10's). Times as bwprof does (flush written, clean buffer read, ~20 us spin,
// events; median of 30, passes in turn) the library's kernels launched directly beside new forms,
// each checked against a float64 reference of llama.cpp-layout blocks packed by q4_frag_pack. Its
// variant list and shapes (set 1) were edited from call to call; the raw output of the nine calls,
// with each call's names, is docs/benchmarks/q4_round11_h200_2026-11-29.txt (ten calls). The calls with `lean4`
// packed `qp` by to_pairs, the later ones by to_pairs5 (lean5), as written here.
// The forms, in the order tried: `flood` (many warps with few chunks, every chunk of a tile in one
// round, X compact or as the library holds it), `leanf`/`lean2` (the same in at most 32 registers:
// only the column M = 1 stores, scales and X one word a lane; spilled), `lean3` (one round, no loop:
// no spill; the options the library's flood32x2 took: X staged per warp in shared memory, adjacent
// chunks, the block's sum on four accumulators), `lean4`/`lean5` (the weights re-packed in whole
// lines), `lean6` (the tile's scales by one bulk copy), `lean7` (the library's kernel with L2 prefetch
// hints and the block's sum on warp 0's 32 lanes), `probeB` (the loads alone in blocks of 4-32 warps),
// and, after the adoption (call 10), `pflood` (the flood made persistent for grids past one wave).
// Build (from the repository root; CUDA 12.4+):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -DBWPROF_WITH_GPU -I cpp/src -I kernels \
//        -I cpp/include --expt-relaxed-constexpr benchmarks/experiments/q4_round11.cu -o q4_round11
// Run: ./q4_round11 1 [passes]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_runtime.hpp"
#include "q4_0/mma_sm80.hpp"

using namespace bwprof::gpu;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)


__device__ __forceinline__ unsigned ldx32_if(const unsigned* p, bool pred) {
  unsigned r = 0;
  asm volatile("{.reg .pred p; setp.ne.b32 p, %1, 0;\n @p ld.global.nc.u32 %0, [%2];}\n" : "+r"(r) : "r"((int)pred), "l"(p));
  return r;
}
// The flood: a block per 16-row tile, WARPS warps, warp w streams chunks w, w + WARPS, ... through a
// ring of U chunks (at WARPS * U = 64 a 4096-long row is one round: every byte of the tile asked for at
// once). Many warps with few chunks each, so that the SM's warp scheduler, not a warp's program order,
// picks which chunk is computed next. XM: 0 X compact (M = 1 only: one word a lane a chunk, shuffled
// into the B fragments), 1 X fragments as the library holds them (two uint4 a chunk on lanes g < M),
// 2 no X (probe). PROBE: loads alone.
template <int WARPS, int U, int XM, bool PROBE, int MINB = 1>
__global__ void __launch_bounds__(WARPS * 32, MINB) flood(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                         __half* __restrict__ y, int M, int N, int K) {
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2;
  const std::size_t tile = blockIdx.x;
  const uint4* qt = q + tile * nch * 36 + lane;
  const uint2* st = reinterpret_cast<const uint2*>(q + 32) + tile * nch * 72 + g;
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  const unsigned* xw = reinterpret_cast<const unsigned*>(x) + lane;
  const bool xhi = lane >= 16;
  uint4 qv[U], xr[XM == 1 ? U : 1][2];
  uint2 sv[U];
  unsigned xc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS;
    load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nch);
    load_stream_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nch);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS;
    if (XM == 0) xc[u] = ldx32_if(xw + 32 * c, c < nch && 2 * c + xhi < nb);
    if (XM == 1) q4_load_x(xr[u], xg, c, nb, has_x && c < nch);
    if (XM == 2) xc[u] = 0;
  }
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = warp; c0 < nch; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nch) break;
      const int cn = c + U * WARPS;
      if (PROBE) {
        unsigned h = qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sv[u].x ^ sv[u].y;
        if (XM == 1) h ^= xr[u][0].x ^ xr[u][0].y ^ xr[u][0].z ^ xr[u][0].w ^ xr[u][1].x ^ xr[u][1].y ^ xr[u][1].z ^ xr[u][1].w;
        else h ^= xc[u];
        acc[0] += __uint_as_float(h & 0x007fffffu);
      } else {
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            unsigned a[4];
            q4_frag_decode<true>(wq[2 * b + i], a);
            unsigned bf[2];
            if (XM == 1) {
              bf[0] = i == 0 ? xr[u][b].x : xr[u][b].z;
              bf[1] = i == 0 ? xr[u][b].y : xr[u][b].w;
            } else {
              bf[0] = __shfl_sync(0xffffffffu, xc[u], 16 * b + 4 * t + 2 * i);
              bf[1] = __shfl_sync(0xffffffffu, xc[u], 16 * b + 4 * t + 2 * i + 1);
            }
            mma_16816(cf, a, bf);
          }
          q4_scale_add(acc, cf, b == 0 ? sv[u].x : sv[u].y);
        }
      }
      const bool next = cn < nch;
      load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, next);
      if (XM == 0) xc[u] = ldx32_if(xw + 32 * cn, next && 2 * cn + xhi < nb);
      if (XM == 1) q4_load_x(xr[u], xg, cn, nb, has_x && next);
    }
  }
  q4_tile_store<WARPS>(part, acc, tile, M, N, y);
}
// The lean flood (M = 1 only): rounds of U chunks a warp (all loaded, then all computed: no refill
// pointers live across the math), X and the scales compact (a word a lane a chunk, shuffled to the
// lanes that use them), only the output column that M = 1 stores accumulated: at most 32 registers,
// so that two blocks of 32 warps fit an SM. XM 2: no X (probe).
// Lane (lane & 3) | (S & ~3) 's a, S an immediate: the source lane keeps the reader's low two bits.
template <int S>
__device__ __forceinline__ unsigned shfl_t(unsigned a) {
  unsigned r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x31f, 0xffffffff;" : "=r"(r) : "r"(a), "n"(S));
  return r;
}
// Lane (lane & ~3) | S 's a (a shuffle within groups of 4 lanes).
template <int S>
__device__ __forceinline__ unsigned shfl_g(unsigned a) {
  unsigned r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1c03, 0xffffffff;" : "=r"(r) : "r"(a), "n"(S));
  return r;
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2>
__global__ void __launch_bounds__(WARPS * 32, MINB) leanf(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                         __half* __restrict__ y, int M, int N, int K) {
  __shared__ float part[WARPS * 16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2;
  const std::size_t tile = blockIdx.x;
  // Lane 4 s + t holds X word 16 b + 4 t + 2 i + e of its chunk, s = 4 b + 2 i + e: the word that
  // lane t of every row group needs for mma i of block b (e: its first or second register).
  const int sx = lane >> 2;
  const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 16 * (sx >> 2) + 4 * t + 2 * ((sx >> 1) & 1) + (sx & 1);
  const bool xhi = lane >= 16;
  // Lane 4 g + b holds scale word 2 g + b (b < 2), the scales of rows g, g + 8 of Q4 block b.
  const int sword = 2 * g + (t & 1);
  float acc0 = 0.f, acc2 = 0.f;
#pragma unroll 1
  for (int c0 = warp; c0 < nch; c0 += WARPS * U) {
    uint4 qv[U];
    unsigned sc[U], xc[U];
    const uint4* qt = q + (tile * nch + c0) * 36 + lane;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool ok = c0 + u * WARPS < nch;
      load_stream_if(qv[u], qt + u * WARPS * 36, ok);
      sc[u] = ldx32_if(reinterpret_cast<const unsigned*>(qt + u * WARPS * 36 + 32 - lane) + sword, ok && t < 2);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      xc[u] = XM == 0 ? ldx32_if(xw + 32 * c, c < nch && 2 * c + xhi < nb) : 0u;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c0 + u * WARPS >= nch) break;
      if (PROBE) {
        acc0 += __uint_as_float((qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sc[u] ^ xc[u]) & 0x007fffffu);
        continue;
      }
      const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
      for (int b = 0; b < 2; ++b) {
        float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          unsigned a[4];
          q4_frag_decode<true>(wq[2 * b + i], a);
          unsigned bf[2];
          if (b == 0 && i == 0) bf[0] = shfl_t<0>(xc[u]), bf[1] = shfl_t<4>(xc[u]);
          if (b == 0 && i == 1) bf[0] = shfl_t<8>(xc[u]), bf[1] = shfl_t<12>(xc[u]);
          if (b == 1 && i == 0) bf[0] = shfl_t<16>(xc[u]), bf[1] = shfl_t<20>(xc[u]);
          if (b == 1 && i == 1) bf[0] = shfl_t<24>(xc[u]), bf[1] = shfl_t<28>(xc[u]);
          mma_16816(cf, a, bf);
        }
        const unsigned sw = b == 0 ? shfl_g<0>(sc[u]) : shfl_g<1>(sc[u]);
        const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
        acc0 += d.x * cf[0];
        acc2 += d.y * cf[2];
      }
    }
  }
  if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s = 0.f;
#pragma unroll 8
    for (int w = 0; w < WARPS; ++w) s += part[w * 16 + threadIdx.x];
    const std::size_t n = tile * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(s);
  }
}
// lean2: the same as leanf with fewer live registers: the round's base pointers recomputed from the
// launch's parameters each round (no 64-bit pointer live across the math), the chunk's math in a
// helper.
template <int XM>
__device__ __forceinline__ void lean_chunk(const uint4& qv, unsigned sc, unsigned xc, float& acc0, float& acc2) {
  const unsigned wq[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      unsigned a[4];
      q4_frag_decode<true>(wq[2 * b + i], a);
      unsigned bf[2];
      if (b == 0 && i == 0) bf[0] = shfl_t<0>(xc), bf[1] = shfl_t<4>(xc);
      if (b == 0 && i == 1) bf[0] = shfl_t<8>(xc), bf[1] = shfl_t<12>(xc);
      if (b == 1 && i == 0) bf[0] = shfl_t<16>(xc), bf[1] = shfl_t<20>(xc);
      if (b == 1 && i == 1) bf[0] = shfl_t<24>(xc), bf[1] = shfl_t<28>(xc);
      mma_16816(cf, a, bf);
    }
    const unsigned sw = b == 0 ? shfl_g<0>(sc) : shfl_g<1>(sc);
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2>
__global__ void __launch_bounds__(WARPS * 32, MINB) lean2(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                         __half* __restrict__ y, int M, int N, int K) {
  __shared__ float part[WARPS * 16];
  const int nb = K / 32, nch = (nb + 1) / 2;
  float acc0 = 0.f, acc2 = 0.f;
#pragma unroll 1
  for (int c0 = threadIdx.x / 32; c0 < nch; c0 += WARPS * U) {
    const int lane = threadIdx.x % 32, t = lane & 3, sx = lane >> 2;
    const uint4* qt = q + (static_cast<std::size_t>(blockIdx.x) * nch + c0) * 36;
    const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 32 * c0 + 16 * (sx >> 2) + 4 * t + 2 * ((sx >> 1) & 1) + (sx & 1);
    uint4 qv[U];
    unsigned sc[U], xc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool ok = c0 + u * WARPS < nch;
      load_stream_if(qv[u], qt + u * WARPS * 36 + lane, ok);
      sc[u] = ldx32_if(reinterpret_cast<const unsigned*>(qt + u * WARPS * 36 + 32) + 2 * sx + (t & 1), ok && t < 2);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      xc[u] = XM == 0 ? ldx32_if(xw + 32 * u * WARPS, c < nch && 2 * c + (lane >= 16) < nb) : 0u;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c0 + u * WARPS >= nch) break;
      if (PROBE) {
        acc0 += __uint_as_float((qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sc[u] ^ xc[u]) & 0x007fffffu);
      } else {
        lean_chunk<XM>(qv[u], sc[u], xc[u], acc0, acc2);
      }
    }
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if ((lane & 3) == 0) part[warp * 16 + lane / 4] = acc0, part[warp * 16 + lane / 4 + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s = 0.f;
#pragma unroll 8
    for (int w = 0; w < WARPS; ++w) s += part[w * 16 + threadIdx.x];
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(s);
  }
}
// lean3: lean2 for one round only (K <= 64 * WARPS * U: a 4096-long row at 32 x 2): no loop, so no
// loop-carried registers; the block past a longer row returns garbage (the harness checks it only
// where it applies).
// OPT bits: 1 X asked for before the weights; 2 the block's sum with 4 accumulators a thread; 4 the
// block's sum by shared-memory atomics as each warp ends; 8 (probes) no block sum: each warp writes its
// checksum.
// The same with X's fragments read from the warp's own copy of the chunk's X in shared memory (two
// 16-byte reads instead of 8 shuffles).
__device__ __forceinline__ void lean_chunk_s(const uint4& qv, unsigned sc, const uint4* xs, float& acc0, float& acc2) {
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
      const unsigned bf[2] = {i == 0 ? xv.x : xv.z, i == 0 ? xv.y : xv.w};
      mma_16816(cf, a, bf);
    }
    const unsigned sw = b == 0 ? shfl_g<0>(sc) : shfl_g<1>(sc);
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2, int OPT = 0>
__global__ void __launch_bounds__(WARPS * 32, MINB) lean3(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                         __half* __restrict__ y, int M, int N, int K) {
  __shared__ float part[WARPS * 16];
  __shared__ uint4 xsm[(OPT & 16) ? WARPS * U * 8 : 1];
  constexpr bool kXS = (OPT & 16) != 0, kAdj = (OPT & 32) != 0, kTwice = (OPT & 64) != 0;
  const int nb = K / 32, nch = (nb + 1) / 2;
  float acc0 = 0.f, acc2 = 0.f;
  if (OPT & 4) {
    if (threadIdx.x < 16) part[threadIdx.x] = 0.f;
    __syncthreads();
  }
  {
    // chunk u of this warp: c0 + u * CS
    constexpr int CS = kAdj ? 1 : WARPS;
    const int c0 = kAdj ? (threadIdx.x / 32) * U : threadIdx.x / 32;
    const int lane = threadIdx.x % 32, t = lane & 3, sx = lane >> 2;
    const uint4* qt = q + (static_cast<std::size_t>(blockIdx.x) * nch + c0) * 36;
    const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 32 * c0 +
                         (kXS ? lane : 16 * (sx >> 2) + 4 * t + 2 * ((sx >> 1) & 1) + (sx & 1));
    uint4 qv[U];
    unsigned sc[U], xc[U];
    if (OPT & 1) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = c0 + u * CS;
        xc[u] = XM == 0 ? ldx32_if(xw + 32 * u * CS, c < nch && 2 * c + (lane >= 16) < nb) : 0u;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool ok = c0 + u * CS < nch;
      load_stream_if(qv[u], qt + u * CS * 36 + lane, ok);
      sc[u] = ldx32_if(reinterpret_cast<const unsigned*>(qt + u * CS * 36 + 32) + 2 * sx + (t & 1), ok && t < 2);
    }
    if (!(OPT & 1)) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = c0 + u * CS;
        xc[u] = XM == 0 ? ldx32_if(xw + 32 * u * CS, c < nch && 2 * c + (lane >= 16) < nb) : 0u;
      }
    }
    uint4* xsw = xsm + (threadIdx.x / 32) * U * 8;
    if (kXS && !PROBE) {
#pragma unroll
      for (int u = 0; u < U; ++u) reinterpret_cast<unsigned*>(xsw + 8 * u)[lane] = xc[u];
      __syncwarp();
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c0 + u * CS >= nch) break;
      if (PROBE) {
        acc0 += __uint_as_float((qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sc[u] ^ xc[u]) & 0x007fffffu);
      } else if (kXS) {
        lean_chunk_s(qv[u], sc[u], xsw + 8 * u, acc0, acc2);
      } else {
        lean_chunk<XM>(qv[u], sc[u], xc[u], acc0, acc2);
        if (kTwice) lean_chunk<XM>(qv[u], sc[u], xc[u], acc0, acc2);
      }
    }
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (OPT & 8) {
    if (acc0 == 1.2345f) y[blockIdx.x] = __float2half_rn(acc0);
    return;
  }
  if (OPT & 4) {
    if ((lane & 3) == 0) atomicAdd(&part[lane / 4], acc0), atomicAdd(&part[lane / 4 + 8], acc2);
    __syncthreads();
    if (threadIdx.x < 16) {
      const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
      if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(part[threadIdx.x]);
    }
    return;
  }
  if ((lane & 3) == 0) part[warp * 16 + lane / 4] = acc0, part[warp * 16 + lane / 4 + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s = 0.f;
    if (OPT & 2) {
      float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int w = 0; w < WARPS; ++w) s4[w & 3] += part[w * 16 + threadIdx.x];
      s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
    } else {
#pragma unroll 8
      for (int w = 0; w < WARPS; ++w) s += part[w * 16 + threadIdx.x];
    }
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(s);
  }
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2, int OPT = 0>
void launchL3(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean3<WARPS, U, XM, PROBE, MINB, OPT><<<(N + 15) / 16, WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
// lean4: the weights re-packed by chunk pairs into 128-byte lines, so that each mma's A fragments are
// one line (a word a lane) and a warp can compute a word as soon as its line is there, instead of
// waiting for a whole 576-byte record. A pair (chunks 2p, 2p + 1) is 1152 bytes: 8 quant lines (line
// 4 u + s: word s of every lane of chunk u), then one scale line (lane 4 g + 2 u + b: scale word
// 2 g + b of chunk u, rows g and g + 8 of Q4 block b). Warp w takes pair w (one round: 2 * WARPS
// chunks). OPT 16: X through the warp's shared memory (else compact, by shuffles).
constexpr int kPairBytes = 1152;
template <int U, bool XSM>
__device__ __forceinline__ void lean4_chunk(const unsigned (&wq)[4], unsigned sc, unsigned xc, const uint4* xs,
                                            float& acc0, float& acc2) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    float cf[4] = {0.f, 0.f, 0.f, 0.f};
    uint4 xv;
    if (XSM) xv = xs[4 * b + t];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      unsigned a[4];
      q4_frag_decode<true>(wq[2 * b + i], a);
      unsigned bf[2];
      if (XSM) {
        bf[0] = i == 0 ? xv.x : xv.z, bf[1] = i == 0 ? xv.y : xv.w;
      } else {
        if (b == 0 && i == 0) bf[0] = shfl_t<0>(xc), bf[1] = shfl_t<4>(xc);
        if (b == 0 && i == 1) bf[0] = shfl_t<8>(xc), bf[1] = shfl_t<12>(xc);
        if (b == 1 && i == 0) bf[0] = shfl_t<16>(xc), bf[1] = shfl_t<20>(xc);
        if (b == 1 && i == 1) bf[0] = shfl_t<24>(xc), bf[1] = shfl_t<28>(xc);
      }
      mma_16816(cf, a, bf);
    }
    unsigned sw;
    if (U == 0) sw = b == 0 ? shfl_g<0>(sc) : shfl_g<1>(sc);
    else sw = b == 0 ? shfl_g<2>(sc) : shfl_g<3>(sc);
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <int WARPS, bool PROBE, int OPT = 0>
__global__ void __launch_bounds__(WARPS * 32, 2) lean4(const unsigned* __restrict__ q, const __half* __restrict__ x,
                                                      __half* __restrict__ y, int M, int N, int K) {
  __shared__ float part[WARPS * 16];
  constexpr bool kXS = (OPT & 16) != 0;
  __shared__ uint4 xsm[kXS ? WARPS * 16 : 1];
  const int nb = K / 32, nch = (nb + 1) / 2, np = (nch + 1) / 2;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float acc0 = 0.f, acc2 = 0.f;
  if (warp < np) {
    const int t = lane & 3, sx = lane >> 2;
    const unsigned* pq = q + (static_cast<std::size_t>(blockIdx.x) * np + warp) * (kPairBytes / 4) + lane;
    const int c0 = 2 * warp;
    const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 32 * c0 +
                         (kXS ? lane : 16 * (sx >> 2) + 4 * t + 2 * ((sx >> 1) & 1) + (sx & 1));
    unsigned sc = 0, wq[2][4], xc[2];
    load_stream_if(sc, pq + 256, true);
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
      for (int s = 0; s < 4; ++s) load_stream_if(wq[u][s], pq + 32 * (4 * u + s), true);
#pragma unroll
    for (int u = 0; u < 2; ++u) xc[u] = ldx32_if(xw + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
    if (PROBE) {
      acc0 = __uint_as_float((wq[0][0] ^ wq[0][1] ^ wq[0][2] ^ wq[0][3] ^ wq[1][0] ^ wq[1][1] ^ wq[1][2] ^ wq[1][3] ^ sc ^
                              xc[0] ^ xc[1]) & 0x007fffffu);
    } else {
      uint4* xsw = xsm + warp * 16;
      if (kXS) {
#pragma unroll
        for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xsw + 8 * u)[lane] = xc[u];
        __syncwarp();
      }
      lean4_chunk<0, kXS>(wq[0], sc, xc[0], xsw, acc0, acc2);
      lean4_chunk<1, kXS>(wq[1], sc, xc[1], xsw + 8, acc0, acc2);
    }
  }
  if ((lane & 3) == 0) part[warp * 16 + lane / 4] = acc0, part[warp * 16 + lane / 4 + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s4[w & 3] += part[w * 16 + threadIdx.x];
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn((s4[0] + s4[1]) + (s4[2] + s4[3]));
  }
}
template <int WARPS, bool PROBE, int OPT = 0>
void launchL4(const unsigned* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean4<WARPS, PROBE, OPT><<<(N + 15) / 16, WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
// The pair layout from the record layout (host).
std::vector<unsigned char> to_pairs(const std::vector<unsigned char>& rec, int tiles, int nch) {
  const int np = (nch + 1) / 2;
  std::vector<unsigned char> out((std::size_t)tiles * np * kPairBytes, 0);
  for (int tl = 0; tl < tiles; ++tl)
    for (int c = 0; c < nch; ++c) {
      const unsigned char* r = &rec[((std::size_t)tl * nch + c) * 576];
      unsigned char* o = &out[((std::size_t)tl * np + c / 2) * kPairBytes];
      const int u = c % 2;
      for (int s = 0; s < 4; ++s)
        for (int l = 0; l < 32; ++l) memcpy(o + (4 * u + s) * 128 + 4 * l, r + 16 * l + 4 * s, 4);
      for (int g = 0; g < 8; ++g)
        for (int b = 0; b < 2; ++b) memcpy(o + 1024 + 4 * (4 * g + 2 * u + b), r + 512 + 4 * (2 * g + b), 4);
    }
  return out;
}
// lean5: a warp's two adjacent chunks as one 1152-byte pair of 9 whole lines: chunk 0's 512 quant
// bytes, chunk 1's, then one line of scales in the order the lanes use them (lane 4 g + 2 u + b: scale
// word 2 g + b of chunk u). Loads a warp: 2 x 16 bytes a lane + 4 bytes a lane + X (instead of two
// 576-byte records, whose scale half-lines share a line with the next quants).
template <int U>
__device__ __forceinline__ void lean5_chunk(const uint4& qv, unsigned sc, const uint4* xs, float& acc0, float& acc2) {
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
    const unsigned sw = __shfl_sync(0xffffffffu, sc, 2 * U + b, 4);
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <bool PROBE>
__global__ void __launch_bounds__(1024, 2) lean5(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                __half* __restrict__ y, int M, int N, int K) {
  constexpr int WARPS = 32;
  __shared__ float part[WARPS * 16];
  __shared__ uint4 xsm[WARPS * 16];
  const int nb = K / 32, nch = (nb + 1) / 2, np = (nch + 1) / 2;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  float acc0 = 0.f, acc2 = 0.f;
  if (warp < np) {
    const int c0 = 2 * warp;
    const uint4* pr = q + (static_cast<std::size_t>(blockIdx.x) * np + warp) * 72;
    uint4 qv[2];
    unsigned sc = 0, xc[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) load_stream_if(qv[u], pr + 32 * u + lane, c0 + u < nch);
    load_stream_if(sc, reinterpret_cast<const unsigned*>(pr + 64) + lane, true);
    const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 32 * c0 + lane;
#pragma unroll
    for (int u = 0; u < 2; ++u) xc[u] = ldx32_if(xw + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
    if (PROBE) {
      acc0 = __uint_as_float((qv[0].x ^ qv[0].y ^ qv[0].z ^ qv[0].w ^ qv[1].x ^ qv[1].y ^ qv[1].z ^ qv[1].w ^ sc ^ xc[0] ^ xc[1]) & 0x007fffffu);
    } else {
      uint4* xsw = xsm + warp * 16;
#pragma unroll
      for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xsw + 8 * u)[lane] = xc[u];
      __syncwarp();
      lean5_chunk<0>(qv[0], sc, xsw, acc0, acc2);
      if (c0 + 1 < nch) lean5_chunk<1>(qv[1], sc, xsw + 8, acc0, acc2);
    }
  }
  if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s4[w & 3] += part[w * 16 + threadIdx.x];
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn((s4[0] + s4[1]) + (s4[2] + s4[3]));
  }
}
template <bool PROBE>
void launchL5(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean5<PROBE><<<(N + 15) / 16, 1024, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
// Probes of the flood's loads in blocks of WARPS warps (2 adjacent chunks a warp over the flattened
// chunks of every tile): SC the scales too, XL X too; no product, no block sum.
template <int WARPS, bool SC, bool XL>
__global__ void __launch_bounds__(WARPS * 32) probeB(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                   __half* __restrict__ y, int M, int N, int K) {
  const int nb = K / 32, nch = (nb + 1) / 2;
  const std::size_t total = static_cast<std::size_t>((N + 15) / 16) * nch;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const std::size_t c0 = (static_cast<std::size_t>(blockIdx.x) * WARPS + warp) * 2;
  if (c0 >= total) return;
  uint4 qv[2];
  unsigned sc[2] = {0u, 0u}, xc[2] = {0u, 0u};
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    load_stream_if(qv[u], q + (c0 + u) * 36 + lane, c0 + u < total);
    if (SC) load_stream_if(sc[u], reinterpret_cast<const unsigned*>(q + (c0 + u) * 36 + 32) + 2 * g + (t & 1), c0 + u < total && t < 2);
  }
  if (XL) {
    const int ct = static_cast<int>(c0 % nch);
#pragma unroll
    for (int u = 0; u < 2; ++u) xc[u] = ldx32_if(reinterpret_cast<const unsigned*>(x) + 32 * (ct + u) + lane, ct + u < nch);
  }
  const unsigned h = qv[0].x ^ qv[0].y ^ qv[0].z ^ qv[0].w ^ qv[1].x ^ qv[1].y ^ qv[1].z ^ qv[1].w ^ sc[0] ^ sc[1] ^ xc[0] ^ xc[1];
  if (h == 0x9e3779b9u) y[0] = __float2half_rn(1.f);
}
template <int WARPS, bool SC, bool XL>
void launchPB(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  const std::size_t total = static_cast<std::size_t>((N + 15) / 16) * ((K / 32 + 1) / 2);
  probeB<WARPS, SC, XL><<<(unsigned)((total + 2 * WARPS - 1) / (2 * WARPS)), WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
// lean6: the flood with the weights in two arrays (quants 512 bytes a chunk, scales 64 bytes a chunk,
// a tile's scales contiguous): the tile's scales (nch * 64 bytes) come by ONE bulk copy (the copy
// engine, not the warps' load slots) into shared memory, waited for on an mbarrier just before the
// first scale is used; the quants and X as in the flood.
__device__ __forceinline__ void l6_wait(unsigned bar) {
  asm volatile("{.reg .pred p;\nW6: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n@!p bra W6;}\n" ::"r"(bar) : "memory");
}
template <bool PROBE>
__global__ void __launch_bounds__(1024, 2) lean6(const uint4* __restrict__ q, const uint2* __restrict__ sg, const __half* __restrict__ x,
                                                __half* __restrict__ y, int M, int N, int K) {
  constexpr int WARPS = 32;
  __shared__ float part[WARPS * 16];
  __shared__ uint4 xsm[WARPS * 16];
  __shared__ __align__(128) uint2 ssm[64 * 8];
  __shared__ __align__(8) unsigned long long bar;
  const int nb = K / 32, nch = (nb + 1) / 2;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int c0 = 2 * warp;
  uint4 qv[2];
  unsigned xc[2] = {0u, 0u};
  if (c0 < nch) {
    const uint4* qt = q + (static_cast<std::size_t>(blockIdx.x) * nch + c0) * 32 + lane;
#pragma unroll
    for (int u = 0; u < 2; ++u) load_stream_if(qv[u], qt + 32 * u, c0 + u < nch);
    const unsigned* xw = reinterpret_cast<const unsigned*>(x) + 32 * c0 + lane;
#pragma unroll
    for (int u = 0; u < 2; ++u) xc[u] = ldx32_if(xw + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
  }
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) {
    const unsigned bytes = nch * 64;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(ssm))), "l"(sg + static_cast<std::size_t>(blockIdx.x) * nch * 8), "r"(bytes), "r"(b) : "memory");
  }
  __syncthreads();
  float acc0 = 0.f, acc2 = 0.f;
  if (c0 < nch) {
    if (PROBE) {
      l6_wait(b);
      const uint2 s0 = ssm[c0 * 8 + g], s1 = ssm[(c0 + 1) * 8 + g];
      acc0 = __uint_as_float((qv[0].x ^ qv[0].y ^ qv[0].z ^ qv[0].w ^ qv[1].x ^ qv[1].y ^ qv[1].z ^ qv[1].w ^ s0.x ^ s0.y ^ s1.x ^ s1.y ^ xc[0] ^ xc[1]) & 0x007fffffu);
    } else {
      uint4* xsw = xsm + warp * 16;
#pragma unroll
      for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xsw + 8 * u)[lane] = xc[u];
      __syncwarp();
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        if (c0 + u >= nch) break;
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
        float cf[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
        for (int bb = 0; bb < 2; ++bb) {
          const uint4 xv = xsw[8 * u + 4 * bb + t];
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            unsigned a[4];
            q4_frag_decode<true>(wq[2 * bb + i], a);
            q4_word_mma(cf[bb], a, xv, i);
          }
        }
        if (u == 0) l6_wait(b);
        const uint2 sv = ssm[(c0 + u) * 8 + g];
#pragma unroll
        for (int bb = 0; bb < 2; ++bb) {
          const unsigned sw = bb == 0 ? sv.x : sv.y;
          const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
          acc0 += d.x * cf[bb][0];
          acc2 += d.y * cf[bb][2];
        }
      }
    }
  }
  if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
  __syncthreads();
  if (threadIdx.x < 16) {
    float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s4[w & 3] += part[w * 16 + threadIdx.x];
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn((s4[0] + s4[1]) + (s4[2] + s4[3]));
  }
}
template <bool PROBE>
void launchL6(const uint4* q, const uint2* sg, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean6<PROBE><<<(N + 15) / 16, 1024, 0, s>>>(q, sg, x, y, M, N, K);
  CK(cudaGetLastError());
}
// lean7: the library's flood kernel with options: 1 the weights' loads with the L2::256B prefetch
// hint, 2 with L2::128B, 4 the block's sum by all 32 lanes of warp 0 (16 warps each, then a shuffle).
template <int H>
__device__ __forceinline__ void ld7(uint4& r, const void* p, bool pred) {
  if (H == 1)
    asm volatile("{.reg .pred p; setp.ne.b32 p, %4, 0;\n @p ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
                 : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w) : "r"((int)pred), "l"(p));
  else if (H == 2)
    asm volatile("{.reg .pred p; setp.ne.b32 p, %4, 0;\n @p ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
                 : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w) : "r"((int)pred), "l"(p));
  else
    load_stream_if(r, p, pred);
}
template <int H>
__device__ __forceinline__ void ld7(unsigned& r, const void* p, bool pred) {
  if (H == 1)
    asm volatile("{.reg .pred p; setp.ne.b32 p, %1, 0;\n @p ld.global.nc.L1::no_allocate.L2::256B.u32 %0, [%2];}\n" : "+r"(r) : "r"((int)pred), "l"(p));
  else if (H == 2)
    asm volatile("{.reg .pred p; setp.ne.b32 p, %1, 0;\n @p ld.global.nc.L1::no_allocate.L2::128B.u32 %0, [%2];}\n" : "+r"(r) : "r"((int)pred), "l"(p));
  else
    load_stream_if(r, p, pred);
}
template <int OPT, bool PROBE>
__global__ void __launch_bounds__(1024, 2) lean7(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                __half* __restrict__ y, int, int N, int K) {
  constexpr int WARPS = 32, H = OPT & 3;
  __shared__ float part[WARPS * 16];
  __shared__ uint4 xs[WARPS * 16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, c0 = 2 * warp;
  float acc0 = 0.f, acc2 = 0.f;
  if (c0 < nch) {
    const uint4* rec = q + (static_cast<std::size_t>(blockIdx.x) * nch + c0) * 36;
    uint4 qv[2];
    unsigned sc[2] = {0u, 0u}, xw[2] = {0u, 0u};
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const bool ok = c0 + u < nch;
      ld7<H>(qv[u], rec + u * 36 + lane, ok);
      ld7<H>(sc[u], reinterpret_cast<const unsigned*>(rec + u * 36 + 32) + 2 * g + (t & 1), ok && t < 2);
    }
    const unsigned* xg = reinterpret_cast<const unsigned*>(x) + 32 * c0 + lane;
#pragma unroll
    for (int u = 0; u < 2; ++u) load_cached_if(xw[u], xg + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
    if (PROBE) {
      acc0 = __uint_as_float((qv[0].x ^ qv[0].y ^ qv[0].z ^ qv[0].w ^ qv[1].x ^ qv[1].y ^ qv[1].z ^ qv[1].w ^ sc[0] ^ sc[1] ^ xw[0] ^ xw[1]) & 0x007fffffu);
    } else {
      uint4* xw_s = xs + warp * 16;
#pragma unroll
      for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xw_s + 8 * u)[lane] = xw[u];
      __syncwarp();
#pragma unroll
      for (int u = 0; u < 2; ++u)
        if (c0 + u < nch) q4_row_chunk(qv[u], sc[u], xw_s + 8 * u, acc0, acc2);
    }
  }
  if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
  __syncthreads();
  if (OPT & 4) {
    if (threadIdx.x < 32) {
      const int r = threadIdx.x & 15, w0 = (threadIdx.x >> 4) * 16;
      float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int w = 0; w < 16; ++w) s4[w & 3] += part[(w0 + w) * 16 + r];
      float s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
      s += __shfl_xor_sync(0xffffffffu, s, 16);
      const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + r;
      if (threadIdx.x < 16 && n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(s);
    }
  } else if (threadIdx.x < 16) {
    float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s[w & 3] += part[w * 16 + threadIdx.x];
    const std::size_t n = static_cast<std::size_t>(blockIdx.x) * 16 + threadIdx.x;
    if (n < static_cast<std::size_t>(N)) y[n] = __float2half_rn((s[0] + s[1]) + (s[2] + s[3]));
  }
}
template <int OPT, bool PROBE>
void launchL7(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean7<OPT, PROBE><<<(N + 15) / 16, 1024, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
// pflood: the flood made persistent for grids past one wave: G = min(tiles, 2 x SMs) blocks, block b
// takes tiles b, b + G, ...; each warp keeps its two chunks' places (2 w, 2 w + 1) in every tile, so its
// X is staged once; each chunk's registers are refilled with the next tile's same chunk right after its
// decode (before its mma), so two chunks a warp stay in flight across tiles. The tile's sum: each warp's
// partials into one of two slots, a block barrier, warp 0 sums and stores.
// One chunk's math with both chunks' scales in one word a lane (lane 4 g + 2 u + b holds chunk u's scale
// word 2 g + b).
template <int U>
__device__ __forceinline__ void pf_chunk(const uint4& qv, unsigned sc2, const uint4* xs, float& acc0, float& acc2) {
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
    const unsigned sw = __shfl_sync(0xffffffffu, sc2, 2 * U + b, 4);
    const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
    acc0 += d.x * cf[0];
    acc2 += d.y * cf[2];
  }
}
template <bool PROBE>
__global__ void __launch_bounds__(1024, 2) pflood(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                 __half* __restrict__ y, int M, int N, int K) {
  constexpr int WARPS = 32;
  __shared__ float part[WARPS * 16];
  __shared__ uint4 xs[WARPS * 16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, c0 = 2 * warp;
  const int tiles = (N + 15) / 16;
  const bool mine = c0 < nch;
  const int su = t >> 1;  // the chunk whose scale word this lane holds
  uint4 qv[2];
  unsigned sc = 0u;
  int tile = blockIdx.x;
  if (mine) {
    const uint4* rec = q + (static_cast<std::size_t>(tile) * nch + c0) * 36;
#pragma unroll
    for (int u = 0; u < 2; ++u) load_stream_if(qv[u], rec + u * 36 + lane, c0 + u < nch);
    load_stream_if(sc, reinterpret_cast<const unsigned*>(rec + su * 36 + 32) + 2 * g + (t & 1), c0 + su < nch);
    unsigned xw[2] = {0u, 0u};
    const unsigned* xg = reinterpret_cast<const unsigned*>(x) + 32 * c0 + lane;
#pragma unroll
    for (int u = 0; u < 2; ++u) load_cached_if(xw[u], xg + 32 * u, c0 + u < nch && 2 * (c0 + u) + (lane >= 16) < nb);
#pragma unroll
    for (int u = 0; u < 2; ++u) reinterpret_cast<unsigned*>(xs + warp * 16 + 8 * u)[lane] = xw[u];
    __syncwarp();
  }
  const uint4* xw_s = xs + warp * 16;
#pragma unroll 1
  for (; tile < tiles; tile += gridDim.x) {
    float acc0 = 0.f, acc2 = 0.f;
    const int tn = tile + gridDim.x;
    if (mine) {
      const bool nx = tn < tiles;
      const uint4* recn = q + (static_cast<std::size_t>(tn) * nch + c0) * 36;
      if (PROBE) {
        acc0 = __uint_as_float((qv[0].x ^ qv[0].y ^ qv[0].z ^ qv[0].w ^ qv[1].x ^ qv[1].y ^ qv[1].z ^ qv[1].w ^ sc) & 0x007fffffu);
      } else {
        pf_chunk<0>(qv[0], sc, xw_s, acc0, acc2);
      }
      load_stream_if(qv[0], recn + lane, nx);
      if (!PROBE && c0 + 1 < nch) pf_chunk<1>(qv[1], sc, xw_s + 8, acc0, acc2);
      load_stream_if(qv[1], recn + 36 + lane, nx && c0 + 1 < nch);
      load_stream_if(sc, reinterpret_cast<const unsigned*>(recn + su * 36 + 32) + 2 * g + (t & 1), nx && c0 + su < nch);
    }
    if (t == 0) part[warp * 16 + g] = acc0, part[warp * 16 + g + 8] = acc2;
    __syncthreads();
    if (threadIdx.x < 32) {
      const int row = threadIdx.x & 15, w0 = (threadIdx.x >> 4) * (WARPS / 2);
      float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int w = 0; w < WARPS / 2; ++w) s4[w & 3] += part[(w0 + w) * 16 + row];
      float sum = (s4[0] + s4[1]) + (s4[2] + s4[3]);
      sum += __shfl_xor_sync(0xffffffffu, sum, 16);
      const std::size_t n = static_cast<std::size_t>(tile) * 16 + row;
      if (threadIdx.x < 16 && n < static_cast<std::size_t>(N)) y[n] = __float2half_rn(sum);
    }
    __syncthreads();
  }
}
template <bool PROBE>
void launchPF(const uint4* q, const __half* x, __half* y, int M, int N, int K, int sms, cudaStream_t s) {
  const int tiles = (N + 15) / 16;
  pflood<PROBE><<<std::min(tiles, 2 * sms), 1024, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
std::vector<unsigned char> to_pairs5(const std::vector<unsigned char>& rec, int tiles, int nch) {
  const int np = (nch + 1) / 2;
  std::vector<unsigned char> out((std::size_t)tiles * np * 1152, 0);
  for (int tl = 0; tl < tiles; ++tl)
    for (int c = 0; c < nch; ++c) {
      const unsigned char* r = &rec[((std::size_t)tl * nch + c) * 576];
      unsigned char* o = &out[((std::size_t)tl * np + c / 2) * 1152];
      const int u = c % 2;
      memcpy(o + 512 * u, r, 512);
      for (int g = 0; g < 8; ++g)
        for (int b = 0; b < 2; ++b) memcpy(o + 1024 + 4 * (4 * g + 2 * u + b), r + 512 + 4 * (2 * g + b), 4);
    }
  return out;
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2>
void launchL2(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  lean2<WARPS, U, XM, PROBE, MINB><<<(N + 15) / 16, WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 2>
void launchL(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  leanf<WARPS, U, XM, PROBE, MINB><<<(N + 15) / 16, WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}
template <int WARPS, int U, int XM, bool PROBE, int MINB = 1>
void launchF(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  flood<WARPS, U, XM, PROBE, MINB><<<(N + 15) / 16, WARPS * 32, 0, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}

__global__ void clean_read(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  const std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 2;
  unsigned acc = 0;
  if (i < n) { uint4 v; load_stream_if(v, p + i, true); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (i + 1 < n) { uint4 v; load_stream_if(v, p + i + 1, true); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void flush_read(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * (std::size_t)blockDim.x) {
    const uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void spin(long long cycles) { const long long t0 = clock64(); while (clock64() - t0 < cycles) {} }

struct Ctx { void* scrub; void* clean; std::size_t fb; int sms; cudaStream_t s; cudaEvent_t e0, e1; unsigned* sink; };

template <class F>
double time_it(Ctx& c, F&& f, int reps = 30) {
  std::vector<float> v;
  for (int i = 0; i < reps; ++i) {
    CK(cudaMemsetAsync(c.scrub, 0x5a, c.fb, c.s));
    flush_read<<<c.sms * 8, 256, 0, c.s>>>((const uint4*)c.clean, c.fb / 16, c.sink);
    spin<<<c.sms, 32, 0, c.s>>>(40000);
    CK(cudaEventRecord(c.e0, c.s));
    f();
    CK(cudaEventRecord(c.e1, c.s));
    CK(cudaEventSynchronize(c.e1));
    float ms; CK(cudaEventElapsedTime(&ms, c.e0, c.e1)); v.push_back(ms * 1e3f);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  Ctx c;
  CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  c.sms = pr.multiProcessorCount;
  c.fb = std::max<std::size_t>(2 * (std::size_t)pr.l2CacheSize, 32u << 20) / 16 * 16;
  CK(cudaMalloc(&c.scrub, c.fb)); CK(cudaMalloc(&c.clean, c.fb)); CK(cudaMemset(c.clean, 0, c.fb));
  CK(cudaMalloc(&c.sink, 64));
  CK(cudaEventCreate(&c.e0)); CK(cudaEventCreate(&c.e1));
  printf("device %s, %d SMs, L2 %d\n", pr.name, c.sms, pr.l2CacheSize);
  const int set = argc > 1 ? atoi(argv[1]) : 1;
  const int passes = argc > 2 ? atoi(argv[2]) : 3;
  struct Shape { int N, K, M; };
  std::vector<Shape> shapes;
  if (set == 1) shapes = {{14336, 4096, 1}, {4096, 4096, 1}, {4240, 4096, 1}, {6144, 4096, 1}, {11008, 4096, 1}, {14339, 4064, 1}, {33, 96, 1}, {4099, 2080, 1}, {17, 32, 1}};
  if (set == 2) shapes = {{4096, 4096, 1}, {14336, 4096, 1}, {1024, 4096, 1}, {4096, 14336, 1}, {6144, 4096, 1}, {4096, 4096, 2}, {1001, 4160, 1}, {33, 96, 3}, {2, 4096, 2}};
  if (set == 3) shapes = {{4096, 4096, 1}, {512, 4096, 1}, {1024, 4096, 1}, {2048, 4096, 1}, {3072, 4096, 1}, {4224, 4096, 1}, {4240, 4096, 1}, {5120, 4096, 1},
                          {4096, 2048, 1}, {4096, 8192, 1}, {4096, 11008, 1}, {4096, 14336, 1}, {1024, 14336, 1}, {2048, 14336, 1}, {4224, 14336, 1},
                          {4096, 4096, 2}, {1001, 4160, 1}, {33, 96, 3}, {2, 4096, 2}, {4099, 4128, 1}};
  if (set == 4) shapes = {{4096, 2048, 1}, {4096, 2560, 1}, {4096, 3072, 1}, {4096, 3584, 1}, {4096, 4096, 1}, {1024, 2048, 1}, {1024, 3072, 1}, {2048, 3072, 1},
                          {4096, 1024, 1}, {4096, 16384, 1}, {4096, 5120, 1}, {3000, 4096, 1}};
  std::mt19937 rng(7);
  for (const Shape& sh : shapes) {
    const int N = sh.N, K = sh.K, M = sh.M;
    const int tiles = (N + 15) / 16, nch = (K / 32 + 1) / 2;
    const std::size_t rb = (std::size_t)tiles * nch * 576;
    std::vector<unsigned char> w18((std::size_t)N * (K / 32) * 18), h(rb);
    for (std::size_t i = 0; i < w18.size(); ++i) w18[i] = rng() & 0xff;
    for (std::size_t bk = 0; bk < (std::size_t)N * (K / 32); ++bk) { unsigned short d = 0x1c00 + (rng() & 0x3ff); memcpy(&w18[bk * 18], &d, 2); }
    q4_frag_pack(w18.data(), N, K, 0, tiles, h.data(), h.data() + 512, kQ4RecordBytes, kQ4RecordBytes);
    std::vector<__half> hx((std::size_t)M * K);
    for (auto& v : hx) v = __float2half((rng() % 2001) / 1000.f - 1.f);
    std::vector<double> gold((std::size_t)M * N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double acc = 0;
        for (int bk = 0; bk < K / 32; ++bk) {
          const unsigned char* bp = &w18[((std::size_t)n * (K / 32) + bk) * 18];
          unsigned short dh; memcpy(&dh, bp, 2); __half_raw hr; hr.x = dh; const double d = __half2float(__half(hr));
          double s2 = 0;
          for (int e = 0; e < 32; ++e) { const int qq = e < 16 ? (bp[2 + e] & 15) : (bp[2 + e - 16] >> 4); s2 += (qq - 8) * (double)__half2float(hx[(std::size_t)m * K + bk * 32 + e]); }
          acc += d * s2;
        }
        gold[(std::size_t)m * N + n] = acc;
      }
    uint4* q; __half *x, *y; unsigned char* rd;
    CK(cudaMalloc(&q, rb)); CK(cudaMemcpy(q, h.data(), rb, cudaMemcpyHostToDevice));
    std::vector<unsigned char> h2q((std::size_t)tiles * nch * 512), h2s((std::size_t)tiles * nch * 64);
    q4_frag_pack(w18.data(), N, K, 0, tiles, h2q.data(), h2s.data());
    uint4* q2; uint2* s2;
    CK(cudaMalloc(&q2, h2q.size())); CK(cudaMemcpy(q2, h2q.data(), h2q.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&s2, h2s.size())); CK(cudaMemcpy(s2, h2s.data(), h2s.size(), cudaMemcpyHostToDevice));
    const std::vector<unsigned char> hp = to_pairs5(h, tiles, nch);
    uint4* qp;
    CK(cudaMalloc(&qp, hp.size())); CK(cudaMemcpy(qp, hp.data(), hp.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&x, hx.size() * 2)); CK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&y, (std::size_t)N * 2 * 8));
    CK(cudaMalloc(&rd, rb + K * 2));
    struct V { std::string name; bool full; std::function<void()> f; };
    std::vector<V> vs;
    auto S = c.s;
    const std::size_t rn = (rb + (std::size_t)K * 2) / 16;
    vs.push_back({"clean read", false, [=] { clean_read<<<(unsigned)((rn + 511) / 512), 256, 0, S>>>((const uint4*)rd, rn, (unsigned*)rd); }});
    auto R = [=](auto kern, int warps, bool xs) { return [=] { kern<<<(N + 15) / 16, warps * 32, xs ? (int)q4_x_smem_bytes(M, K) : 0, S>>>(q, nullptr, x, y, M, N, K); }; };
    constexpr int RL = kQ4Records | kQ4Lop3, EQ = kQ4EarlyRefill;
    vs.push_back({"LIB ring16x2rle", true, R(bwprof_q4_0_matmul_ring<16, 2, true, 1, RL | EQ>, 16, true)});
    vs.push_back({"LIB flood32x2", true, R(bwprof_q4_0_matvec_flood<32>, 32, false)});
    if (M == 1 && K <= 4096) {
      const int sms = c.sms;
      vs.push_back({"LIB ring8x4rl", true, R(bwprof_q4_0_matmul_ring<8, 4, true, 1, RL>, 8, true)});
      vs.push_back({"pflood", true, [=] { launchPF<false>(q, x, y, M, N, K, sms, S); }});
      vs.push_back({"probe pflood", false, [=] { launchPF<true>(q, x, y, M, N, K, sms, S); }});
    }
    {
      const int tl = (N + 15) / 16;
      const bool fills = 4 * tl >= 16 * c.sms, spread = 4 * tl > 5 * c.sms, one_wave = tl <= 2 * c.sms;
      printf("shape M=%d N=%d K=%d tiles=%d library choice: %s\n", M, N, K, tl, (!fills && spread && one_wave && K <= 4096) ? "ringx8x4rl" : "ring8x4rl");
    }
    std::vector<__half> got((std::size_t)M * N);
    bool bad = false;
    for (auto& v : vs) {
      if (!v.full) continue;
      CK(cudaMemsetAsync(y, 0xff, (std::size_t)M * N * 2, S)); v.f(); CK(cudaStreamSynchronize(S));
      CK(cudaMemcpy(got.data(), y, (std::size_t)M * N * 2, cudaMemcpyDeviceToHost));
      double mg = 0, gm = 0;
      for (std::size_t i = 0; i < got.size(); ++i) { const double gv = __half2float(got[i]); mg = std::max(mg, std::isfinite(gv) ? fabs(gv - gold[i]) : 1e30); gm = std::max(gm, fabs(gold[i])); }
      const bool mis = !(mg <= 2e-3 * gm + 1e-3);
      bad |= mis;
      printf("check M=%d N=%d K=%d %-24s vs gold %.3g (max|gold| %.3g)%s\n", M, N, K, v.name.c_str(), mg, gm, mis ? "  MISMATCH" : "");
    }
    if (N >= 512 && M <= 2) {
      std::vector<std::vector<double>> res(vs.size());
      for (int p = 0; p < passes; ++p)
        for (std::size_t i = 0; i < vs.size(); ++i) res[i].push_back(time_it(c, vs[i].f));
      for (std::size_t i = 0; i < vs.size(); ++i) {
        printf("M=%d N=%5d K=%5d %-28s", M, N, K, vs[i].name.c_str());
        for (double d : res[i]) printf(" %6.2f", d);
        printf("\n");
      }
    }
    fflush(stdout);
    CK(cudaFree(q)); CK(cudaFree(qp)); CK(cudaFree(q2)); CK(cudaFree(s2)); CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(rd));
    if (bad) printf("SOME MISMATCH at this shape\n");
  }
  return 0;
}
