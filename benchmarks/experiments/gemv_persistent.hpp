// Persistent GEMV kernels tried in issue #3's second round (gemv2_variants.cu) and NOT adopted: on
// an H100 they were slower than the library's many-short-blocks kernels (numbers in gemv_notes.md).
// Each block owns a contiguous range of rows (FP16) or 16-row tiles (Q4_0) and streams it either
// through registers (software-pipelined predicated loads) or, on sm_90, through shared-memory
// stages filled by the bulk copy engine (cp.async.bulk on mbarriers). Kept for the record.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/gpu_common.hpp"
#include "common/gpu_stream_load.hpp"
#include "q4_0/mma_sm80.hpp"

#if defined(BWPROF_CUDA)
#include <cooperative_groups.h>
#endif

namespace bwprof {
namespace gpu {

#if defined(BWPROF_CUDA)
// ---- sm_90: bulk copies global -> shared completing on an mbarrier (no tensor map needed) -------
__device__ __forceinline__ unsigned shared_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_addr(bar)), "r"(count) : "memory");
#endif
}
// Makes initialized barriers visible to the copy engine; then a __syncthreads for the other threads.
__device__ __forceinline__ void mbar_init_fence() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_addr(bar)) : "memory");
#endif
}
// One arrival that also announces `bytes` of copies to complete on this phase.
__device__ __forceinline__ void mbar_arrive_expect(std::uint64_t* bar, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_addr(bar)), "r"(bytes)
               : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
#if __CUDA_ARCH__ >= 900
  const unsigned a = shared_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{.reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;}\n"
        : "=r"(done)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!done);
#endif
}
// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared, counted on `bar`.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_addr(dst)),
      "l"(src), "r"(bytes), "r"(shared_addr(bar))
      : "memory");
#endif
}
#endif  // BWPROF_CUDA

// Rows one block may own: their partial sums wait in shared memory until the block ends.
constexpr int kGemvMaxRows = 128;

// Rows [r0, r0 + n) of block `b` out of `g`: every block within one row of the others.
__device__ __forceinline__ void gemv_block_rows(int N, int& r0, int& n) {
  const int g = gridDim.x, b = blockIdx.x;
  const int per = N / g, rem = N % g;
  r0 = b * per + (b < rem ? b : rem);
  n = per + (b < rem ? 1 : 0);
}

// Dot product of one thread's V vectors of W with the matching vectors of x (as floats, FX) or
// (packed, XV): the sum over vectors in flight.
template <class T, int V>
__device__ __forceinline__ float gemv_dot(const uint4 (&w)[V], const float (&fx)[V][Elems<T>::kVec]) {
  constexpr int E = Elems<T>::kVec;
  float acc = 0.f;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    float fw[E];
    unpack<T>(w[v], fw);
#pragma unroll
    for (int e = 0; e < E; ++e) acc += fw[e] * fx[v][e];
  }
  return acc;
}

// Register-pipelined: TH threads per block; thread t covers vectors t, t + TH, ... (V of them) of
// every row, so x is read once into registers; D rows are in flight per block: after a row's
// products the thread loads the row D ahead into the registers that row used. Needs
// K / vector <= V * TH and at most kGemvMaxRows rows per block (the host sizes the grid).
// IL: block b takes rows b, b + G, b + 2G, ... (the grid sweeps memory in order) instead of a range.
template <class T, int TH, int V, int D, bool IL = false>
__global__ void __launch_bounds__(TH) bwprof_gemv_rows(const T* __restrict__ W, const T* __restrict__ x,
                                                        T* __restrict__ y, int N, int K) {
  constexpr int E = Elems<T>::kVec;
  constexpr int kWarps = TH / 32;
  __shared__ float red[kGemvMaxRows][kWarps];
  int r0, nrows;
  gemv_block_rows(N, r0, nrows);
  const int G = gridDim.x;
  if (IL) {
    r0 = blockIdx.x;
    nrows = r0 < N ? (N - r0 + G - 1) / G : 0;
  }
  const std::size_t rstride = IL ? static_cast<std::size_t>(G) : 1;  // rows between a block's rows
  const int kvec = K / E, t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint4* w0 = reinterpret_cast<const uint4*>(W + static_cast<std::size_t>(r0) * K) + t;
  bool col[V];
#pragma unroll
  for (int v = 0; v < V; ++v) col[v] = t + v * TH < kvec;
  uint4 wv[D][V];
#pragma unroll
  for (int d = 0; d < D; ++d)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      wv[d][v] = make_uint4(0, 0, 0, 0);  // columns past K stay zero
      load_stream_if(wv[d][v], w0 + d * rstride * kvec + v * TH, col[v] && d < nrows);
    }
  float fx[V][E];
  {
    uint4 xv[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      xv[v] = make_uint4(0, 0, 0, 0);
      load_cached_if(xv[v], reinterpret_cast<const uint4*>(x) + t + v * TH, col[v]);
    }
#pragma unroll
    for (int v = 0; v < V; ++v) unpack<T>(xv[v], fx[v]);
  }
  for (int j0 = 0; j0 < nrows; j0 += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const int j = j0 + d;
      if (j >= nrows) break;  // the same for the whole block
      float acc = gemv_dot<T, V>(wv[d], fx);
      const std::size_t next = (j + D) * rstride * kvec;
#pragma unroll
      for (int v = 0; v < V; ++v) load_stream_if(wv[d][v], w0 + next + v * TH, col[v] && j + D < nrows);
      acc = warp_sum(acc);
      if (lane == 0) red[j][warp] = acc;
    }
  }
  __syncthreads();
  for (int j = t; j < nrows; j += TH) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += red[j][w];
    y[r0 + j * rstride] = from_f<T>(s);
  }
}

#if defined(BWPROF_CUDA)
// Bulk-copied (sm_90): thread 0 streams the block's rows into NS shared-memory stages of `rs` rows
// each (dynamic shared memory, NS * rs * K * sizeof(T) bytes) with cp.async.bulk; every thread
// reads its V vectors of each row from there. A stage is refilled once all warps have released it.
template <class T, int TH, int V, int NS>
__global__ void __launch_bounds__(TH, 1) bwprof_gemv_bulk(const T* __restrict__ W, const T* __restrict__ x,
                                                           T* __restrict__ y, int N, int K, int rs) {
#if __CUDA_ARCH__ >= 900
  constexpr int E = Elems<T>::kVec;
  constexpr int kWarps = TH / 32;
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ std::uint64_t full[NS], empty[NS];
  __shared__ float red[kGemvMaxRows][kWarps];
  int r0, nrows;
  gemv_block_rows(N, r0, nrows);
  const int kvec = K / E, t = threadIdx.x, lane = t % 32, warp = t / 32;
  const std::size_t row_bytes = static_cast<std::size_t>(K) * sizeof(T);
  const std::size_t stage_bytes = row_bytes * rs;
  const int nst = (nrows + rs - 1) / rs;
  const unsigned char* src = reinterpret_cast<const unsigned char*>(W + static_cast<std::size_t>(r0) * K);
  auto issue = [&](int j) {
    const int s = j % NS;
    const int rows = nrows - j * rs < rs ? nrows - j * rs : rs;
    const unsigned bytes = static_cast<unsigned>(rows * row_bytes);
    mbar_arrive_expect(&full[s], bytes);
    bulk_copy(stages + s * stage_bytes, src + j * stage_bytes, bytes, &full[s]);
  };
  if (t == 0) {
    for (int s = 0; s < NS; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kWarps);
    }
    mbar_init_fence();
    for (int j = 0; j < NS && j < nst; ++j) issue(j);
  }
  bool col[V];
#pragma unroll
  for (int v = 0; v < V; ++v) col[v] = t + v * TH < kvec;
  float fx[V][E];
  {
    uint4 xv[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      xv[v] = make_uint4(0, 0, 0, 0);
      load_cached_if(xv[v], reinterpret_cast<const uint4*>(x) + t + v * TH, col[v]);
    }
#pragma unroll
    for (int v = 0; v < V; ++v) unpack<T>(xv[v], fx[v]);
  }
  __syncthreads();
  for (int j = 0; j < nst; ++j) {
    const int s = j % NS;
    const unsigned parity = (j / NS) & 1;
    mbar_wait(&full[s], parity);
    const uint4* st = reinterpret_cast<const uint4*>(stages + s * stage_bytes);
    const int rows = nrows - j * rs < rs ? nrows - j * rs : rs;
    for (int r = 0; r < rows; ++r) {
      uint4 wv[V];
#pragma unroll
      for (int v = 0; v < V; ++v) wv[v] = col[v] ? st[r * kvec + t + v * TH] : make_uint4(0, 0, 0, 0);
      float acc = gemv_dot<T, V>(wv, fx);
      acc = warp_sum(acc);
      if (lane == 0) red[j * rs + r][warp] = acc;
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
    if (t == 0 && j + NS < nst) {
      mbar_wait(&empty[s], parity);
      issue(j + NS);
    }
  }
  __syncthreads();
  for (int j = t; j < nrows; j += TH) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += red[j][w];
    y[r0 + j] = from_f<T>(s);
  }
#endif
}
#endif  // BWPROF_CUDA


#if defined(BWPROF_CUDA)
// Split-K across a thread block cluster (sm_90): the C blocks of a cluster share one 16-row tile, block
// r taking chunks [r nch / C, (r + 1) nch / C); its WARPS warps take every WARPS-th chunk of that
// range, U at a time, and meet in shared memory; then rank 0 of the cluster adds the other blocks'
// sums through distributed shared memory and writes Y. No atomics and no global workspace.
// Why: with C chosen so that a warp's chunks fit in one round of U loads, every warp issues all its
// loads at once and waits once, as in a plain streaming read, and the blocks are short (a tile of
// 14336 x 4096 takes two blocks of 18 KB instead of one of 37 KB in two rounds), so the last wave is
// short. On GPUs without clusters C is 1: one block a tile, rounds of U chunks per warp.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define BWPROF_CLUSTER_DIMS(c)
#else
#define BWPROF_CLUSTER_DIMS(c) __cluster_dims__(c, 1, 1)
#endif
template <int WARPS, int U, int C>
__global__ void BWPROF_CLUSTER_DIMS(C) __launch_bounds__(WARPS * 32)
    bwprof_q4_0_matmul_split(const uint4* __restrict__ q, const uint2* __restrict__ sc, const __half* __restrict__ x,
                             __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800
  __shared__ float4 part[WARPS * 32];
  __shared__ float red[128];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2;
  const std::size_t tile = blockIdx.x / C;
  const int rank = static_cast<int>(blockIdx.x % C);
  const int c0 = static_cast<int>(static_cast<long long>(rank) * nch / C);
  const int c1 = static_cast<int>(static_cast<long long>(rank + 1) * nch / C);
  const uint4* qt = q + tile * nch * 32 + lane;
  const uint2* st = sc + tile * nch * 8 + g;
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int cb = c0 + warp; cb < c1; cb += WARPS * U) {
    uint4 qv[U], xv[U][2];
    uint2 sv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = cb + u * WARPS;
      load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * 32, c < c1);
      load_stream_if(sv[u], st + static_cast<std::size_t>(c) * 8, c < c1);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) q4_load_x(xv[u], xg, cb + u * WARPS, nb, has_x && cb + u * WARPS < c1);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (cb + u * WARPS >= c1) break;  // the same for the whole warp
      q4_frag_chunk(qv[u], sv[u], xv[u], acc);
    }
  }
  part[threadIdx.x] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  __syncthreads();
  float s = 0.f;
  if (threadIdx.x < 128) {  // output (row, column) of lane ln's element j, summed over the warps
    const float* pf = reinterpret_cast<const float*>(part);
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += pf[w * 128 + threadIdx.x];
  }
#if __CUDA_ARCH__ >= 900
  if constexpr (C > 1) {
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x < 128) red[threadIdx.x] = s;
    cluster.sync();
    if (rank == 0 && threadIdx.x < 128)
      for (int r = 1; r < C; ++r) s += cluster.map_shared_rank(red, r)[threadIdx.x];
    cluster.sync();  // the other blocks' shared memory stays until rank 0 has read it
  }
#endif
  if (rank == 0 && threadIdx.x < 128) {
    const int ln = threadIdx.x / 4, j = threadIdx.x % 4;
    const int row = (ln >> 2) + 8 * (j >> 1), m = 2 * (ln & 3) + (j & 1);
    const std::size_t n = tile * 16 + row;
    if (m < M && n < static_cast<std::size_t>(N)) y[static_cast<std::size_t>(m) * N + n] = __float2half_rn(s);
  }
#endif
}

// ---- persistent kernels: each block owns a contiguous range of whole tiles --------------------
// A block's tiles [t0, t0 + nt) are one contiguous run of chunks in memory (tile-major layout), so
// the block streams chunks f0 .. f1 - 1 (f = tile * nch + chunk); warp w takes chunks f0 + w,
// f0 + w + WARPS, ... across tile boundaries, so every warp streams the same number of chunks and
// no block waits on another (no atomics, no fences: the warps of a tile meet in shared memory).
// The warps' partial sums wait in dynamic shared memory, part[tile][warp][lane] (float4): the host
// passes tiles * WARPS * 512 bytes for the most tiles a block owns, q4_part_bytes().

inline std::size_t q4_part_bytes(int warps, int tiles_per_block) {
  return static_cast<std::size_t>(tiles_per_block) * warps * 512;
}

// Tiles [t0, t0 + nt) of this block, within one tile of every other block.
__device__ __forceinline__ void q4_block_tiles(int tiles, int& t0, int& nt) {
  const int g = gridDim.x, b = blockIdx.x;
  const int per = tiles / g, rem = tiles % g;
  t0 = b * per + (b < rem ? b : rem);
  nt = per + (b < rem ? 1 : 0);
}

// The block's outputs from the warps' partial sums part[tile][warp][lane] (float4 each).
template <int WARPS>
__device__ __forceinline__ void q4_write_tiles(const float4* part, int t0, int nt, int M, int N, __half* y) {
  const float* pf = reinterpret_cast<const float*>(part);
  for (int i = threadIdx.x; i < nt * 128; i += blockDim.x) {
    const int tl = i >> 7, e = i & 127, ln = e >> 2, j = e & 3;
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += pf[(tl * WARPS + w) * 128 + e];
    const int row = (ln >> 2) + 8 * (j >> 1), m = 2 * (ln & 3) + (j & 1);
    const std::size_t n = static_cast<std::size_t>(t0 + tl) * 16 + row;
    if (m < M && n < static_cast<std::size_t>(N)) y[static_cast<std::size_t>(m) * N + n] = __float2half_rn(s);
  }
}

// Register-pipelined: each warp keeps U chunks in flight; after a chunk's mma it loads the chunk
// U steps ahead into the registers that chunk used (predicated loads, so nothing waits early).
// XRING: X fragments loaded with the chunk (in the ring) rather than just before its mma.
template <int WARPS, int U, bool XRING>
__global__ void __launch_bounds__(WARPS * 32) bwprof_q4_0_matmul_pipe(const uint4* __restrict__ q,
                                                                    const uint2* __restrict__ sc,
                                                                    const __half* __restrict__ x,
                                                                    __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ float4 part[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, tiles = (N + 15) / 16;
  int t0, nt;
  q4_block_tiles(tiles, t0, nt);
  const long long f0 = static_cast<long long>(t0) * nch, f1 = f0 + static_cast<long long>(nt) * nch;
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  // Load side: next chunk to load, and its chunk within its tile (for X).
  long long fl = f0 + warp;
  int cl = static_cast<int>(fl % nch);
  uint4 qv[U];
  uint2 sv[U];
  uint4 xv[XRING ? U : 1][2];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool p = fl < f1;
    load_stream_if(qv[u], q + fl * 32 + lane, p);
    load_stream_if(sv[u], sc + fl * 8 + g, p);
    if (XRING) q4_load_x(xv[u], xg, cl, nb, has_x && p);
    fl += WARPS;
    for (cl += WARPS; cl >= nch;) cl -= nch;
  }
  if (nch < WARPS) {  // some warps skip some tiles: their partial sums must read as zero
    for (int i = threadIdx.x; i < nt * WARPS * 32; i += blockDim.x) part[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
  }
  long long fc = f0 + warp;
  int tc = static_cast<int>(fc / nch), cc = static_cast<int>(fc % nch);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  while (fc < f1) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (fc >= f1) break;  // the same for the whole warp
      if (XRING) {
        q4_frag_chunk(qv[u], sv[u], xv[u], acc);
      } else {
        uint4 xn[2];
        q4_load_x(xn, xg, cc, nb, has_x);
        q4_frag_chunk(qv[u], sv[u], xn, acc);
      }
      const bool p = fl < f1;
      load_stream_if(qv[u], q + fl * 32 + lane, p);
      load_stream_if(sv[u], sc + fl * 8 + g, p);
      if (XRING) q4_load_x(xv[u], xg, cl, nb, has_x && p);
      fl += WARPS;
      for (cl += WARPS; cl >= nch;) cl -= nch;
      fc += WARPS;
      cc += WARPS;
      if (cc >= nch) {  // this warp's last chunk of tile tc
        part[((tc - t0) * WARPS + warp) * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        acc[0] = acc[1] = acc[2] = acc[3] = 0.f;
        do {
          cc -= nch;
          ++tc;
        } while (cc >= nch);
      }
    }
  }
  __syncthreads();
  q4_write_tiles<WARPS>(part, t0, nt, M, N, y);
#endif
}

// Bulk-copied (sm_90): thread 0 streams the block's chunks, S at a time (S * 576 bytes: quants,
// then scales), into NS shared-memory stages (dynamic, NS * S * 576 bytes before the partial sums) with
// cp.async.bulk on an mbarrier; warp w takes chunks w, w + WARPS, ... of each stage (S a multiple
// of WARPS, so each warp's chunks continue from stage to stage); a stage is refilled once all warps
// have released it. Nothing but the X fragments and one chunk's operands lives in registers.
template <int WARPS, int S, int NS>
__global__ void __launch_bounds__(WARPS * 32, 1) bwprof_q4_0_matmul_bulk(const uint4* __restrict__ q,
                                                                       const uint2* __restrict__ sc,
                                                                       const __half* __restrict__ x,
                                                                       __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 900
  static_assert(S % WARPS == 0, "a stage holds whole rounds of the warps");
  constexpr unsigned kStageBytes = S * 576;
  extern __shared__ __align__(128) unsigned char stages[];  // NS stages, then the partial sums
  __shared__ std::uint64_t full[NS], empty[NS];
  float4* part = reinterpret_cast<float4*>(stages + NS * kStageBytes);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, tiles = (N + 15) / 16;
  int t0, nt;
  q4_block_tiles(tiles, t0, nt);
  const long long f0 = static_cast<long long>(t0) * nch, f1 = f0 + static_cast<long long>(nt) * nch;
  const int nst = static_cast<int>((f1 - f0 + S - 1) / S);
  auto issue = [&](int j) {
    const int s = j % NS;
    const long long first = f0 + static_cast<long long>(j) * S;
    const unsigned n = static_cast<unsigned>(f1 - first < S ? f1 - first : S);
    unsigned char* dst = stages + s * kStageBytes;
    mbar_arrive_expect(&full[s], n * 576);
    bulk_copy(dst, q + first * 32, n * 512, &full[s]);
    bulk_copy(dst + S * 512, sc + first * 8, n * 64, &full[s]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < NS; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], WARPS);
    }
    mbar_init_fence();
    for (int j = 0; j < NS && j < nst; ++j) issue(j);
  }
  if (nch < WARPS)
    for (int i = threadIdx.x; i < nt * WARPS * 32; i += blockDim.x) part[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  long long fc = f0 + warp;
  int tc = static_cast<int>(fc / nch), cc = static_cast<int>(fc % nch);
  uint4 xv[2];
  q4_load_x(xv, xg, cc, nb, has_x);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  __syncthreads();
  for (int j = 0; j < nst; ++j) {
    const int s = j % NS;
    const unsigned parity = (j / NS) & 1;
    const int n = static_cast<int>(f1 - (f0 + static_cast<long long>(j) * S) < S ? f1 - (f0 + static_cast<long long>(j) * S) : S);
    mbar_wait(&full[s], parity);
    const uint4* sq = reinterpret_cast<const uint4*>(stages + s * kStageBytes);
    const uint2* ss = reinterpret_cast<const uint2*>(stages + s * kStageBytes + S * 512);
    for (int i = warp; i < n; i += WARPS) {
      const uint4 qv = sq[i * 32 + lane];
      const uint2 sv = ss[i * 8 + g];
      int cn = cc + WARPS;  // the next chunk's X, loaded while this one computes
      while (cn >= nch) cn -= nch;
      uint4 xn[2];
      q4_load_x(xn, xg, cn, nb, has_x);
      q4_frag_chunk(qv, sv, xv, acc);
      xv[0] = xn[0];
      xv[1] = xn[1];
      cc += WARPS;
      if (cc >= nch) {
        part[((tc - t0) * WARPS + warp) * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        acc[0] = acc[1] = acc[2] = acc[3] = 0.f;
        do {
          cc -= nch;
          ++tc;
        } while (cc >= nch);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
    if (threadIdx.x == 0 && j + NS < nst) {
      mbar_wait(&empty[s], parity);
      issue(j + NS);
    }
  }
  __syncthreads();
  q4_write_tiles<WARPS>(part, t0, nt, M, N, y);
#endif
}

// As bwprof_q4_0_matmul_pipe, but block b owns tiles b, b + G, b + 2G, ... (G = gridDim.x), so that the
// grid sweeps memory in order, as a grid-stride loop does, instead of each block its own far range.
template <int WARPS, int U>
__global__ void __launch_bounds__(WARPS * 32) bwprof_q4_0_matmul_ipipe(const uint4* __restrict__ q,
                                                                     const uint2* __restrict__ sc,
                                                                     const __half* __restrict__ x,
                                                                     __half* __restrict__ y, int M, int N, int K) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ float4 part[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, tiles = (N + 15) / 16;
  const int G = gridDim.x, b0 = blockIdx.x;
  const int nt = b0 < tiles ? (tiles - b0 + G - 1) / G : 0;
  const long long nl = static_cast<long long>(nt) * nch;  // this block's chunks
  const bool has_x = g < M;
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  auto chunk_at = [&](int lt, int c) { return (static_cast<std::size_t>(b0 + lt * G)) * nch + c; };
  long long ll = warp;  // load side: local chunk index, its tile and chunk
  int lt = static_cast<int>(ll / nch), lc = static_cast<int>(ll % nch);
  uint4 qv[U], xv[U][2];
  uint2 sv[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool p = ll < nl;
    const std::size_t f = p ? chunk_at(lt, lc) : 0;
    load_stream_if(qv[u], q + f * 32 + lane, p);
    load_stream_if(sv[u], sc + f * 8 + g, p);
    q4_load_x(xv[u], xg, lc, nb, has_x && p);
    ll += WARPS;
    for (lc += WARPS; lc >= nch;) lc -= nch, ++lt;
  }
  if (nch < WARPS) {
    for (int i = threadIdx.x; i < nt * WARPS * 32; i += blockDim.x) part[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
  }
  long long lcmp = warp;
  int tc = static_cast<int>(lcmp / nch), cc = static_cast<int>(lcmp % nch);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  while (lcmp < nl) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (lcmp >= nl) break;
      q4_frag_chunk(qv[u], sv[u], xv[u], acc);
      const bool p = ll < nl;
      const std::size_t f = p ? chunk_at(lt, lc) : 0;
      load_stream_if(qv[u], q + f * 32 + lane, p);
      load_stream_if(sv[u], sc + f * 8 + g, p);
      q4_load_x(xv[u], xg, lc, nb, has_x && p);
      ll += WARPS;
      for (lc += WARPS; lc >= nch;) lc -= nch, ++lt;
      lcmp += WARPS;
      cc += WARPS;
      if (cc >= nch) {
        part[(tc * WARPS + warp) * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        acc[0] = acc[1] = acc[2] = acc[3] = 0.f;
        do {
          cc -= nch;
          ++tc;
        } while (cc >= nch);
      }
    }
  }
  __syncthreads();
  const float* pf = reinterpret_cast<const float*>(part);
  for (int i = threadIdx.x; i < nt * 128; i += blockDim.x) {
    const int tl = i >> 7, e = i & 127, ln = e >> 2, j = e & 3;
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += pf[(tl * WARPS + w) * 128 + e];
    const int row = (ln >> 2) + 8 * (j >> 1), m = 2 * (ln & 3) + (j & 1);
    const std::size_t n = static_cast<std::size_t>(b0 + tl * G) * 16 + row;
    if (m < M && n < static_cast<std::size_t>(N)) y[static_cast<std::size_t>(m) * N + n] = __float2half_rn(s);
  }
#endif
}
#endif  // BWPROF_CUDA

}  // namespace gpu
}  // namespace bwprof
