// The `tensor` GEMM's wgmma kernel (NVIDIA Hopper, sm_90a builds): wgmma on tiles that the bulk
// tensor copy engine (TMA) brings into shared memory; FP16 or BF16 operands, FP32 accumulation.
// Included by wgmma_sm90_launch.hpp alone, in CUDA builds.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/gpu_common.hpp"
#include "common/gpu_wgmma.hpp"
#include "gemm/choice.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// A block computes a (64*CONS) x BN tile of C, 64 deep per step. Warpgroup 0 is the producer: one
// thread asks the copy engine (TMA) for A[BM x 64] (K-major) and B[64 x BN] (N-major, as boxes of
// 64 x 64) of each step into a STAGES-deep ring of shared memory, 128-byte swizzled, each stage
// completing on its `full` mbarrier. Warpgroups 1..CONS each own 64 rows: they wait on `full`,
// issue four wgmma m64nBNk16 (B transposed by the instruction), keep one step in flight and hand
// the previous step's stage back through its `empty` mbarrier. Edges: the copy engine fills what
// lies outside A and B with zeros; the epilogue (bias, activation, FP16) stores inside C only.
// Clusters (MC = 2, where B's rows are off 128 bytes or the rows are few: choice.hpp's
// clusters_pay): two blocks on neighbouring row tiles of one column tile each bring half the rows
// of every B stage to both (TMA multicast), so B is read from L2 half as often; a stage is free
// once the consumers of both blocks let it go (its `empty` barrier counts both), and each producer
// stays until every stage of its block is free, so that no block outlives the other's copies into
// it or its arrivals. A block past M (the second of a pair on an odd number of row tiles) only
// brings its half and stores nothing.
// Split K: grid.z blocks share an output tile, each taking split_steps steps of 64. With more than
// one, they meet in a buffer of the tile's FP32 sums, held as the threads hold them (coalesced
// float4s, through L2), in split order: split 0 stores its sums, split z waits for the tile's
// counter to reach z, adds the buffer to its sums and stores them back, and the last split runs
// the epilogue. The result does not depend on timing; one launch; no atomics on C's elements (FP32
// atomics on [M, N] from every split took ~50 us at M = N = 1000 on an H100). It relies on blocks
// being dispatched in index order (z slowest), so that the split a block waits for has started.
// Split K by slots (`slots`, where their copies fit kWgmmaSlotsMaxBytes, else the chain above): the splits but the last store their sums
// into their own slot of the tile at once (no waiting) and count themselves in; the last split
// waits for the count, adds the slots in slot order (the result still does not depend on timing)
// and runs the epilogue: one pass of the tile's sums a split, all but the last read side by side,
// against the chain's pass a link one after another. Its buffer holds (splits - 1) tiles' sums
// (beyond choice.hpp's kWgmmaSlotsMaxBytes the chain runs).
#if defined(BWPROF_WGMMA_DEVICE)
__device__ __forceinline__ int ld_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(int* p, int v) {
  asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
#endif

template <int CONS, int BN, int STAGES>
struct WgCfg {
  static constexpr int kBM = 64 * CONS, kBK = 64, kThreads = 128 * (CONS + 1);
  static constexpr int kABytes = kBM * kBK * 2, kBBytes = kBK * BN * 2, kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = STAGES * kStageBytes + 1024 + 2 * STAGES * 8;  // + alignment, barriers
};

template <class T, int CONS, int BN, int STAGES, int MC, int A>
__global__ void __launch_bounds__(WgCfg<CONS, BN, STAGES>::kThreads, 1)
    bwprof_gemm_wgmma(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                      const T* __restrict__ bias, T* __restrict__ C, float4* __restrict__ ws, int* __restrict__ counters,
                      int M, int N, int K, int ldc, int split_steps, int c_pairs, int slots) {
#if defined(BWPROF_WGMMA_DEVICE)
  using Cfg = WgCfg<CONS, BN, STAGES>;
  extern __shared__ __align__(1024) unsigned char wg_smem[];
  const unsigned base = (smem_u32(wg_smem) + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1 KB
  const unsigned a_s = base, b_s = base + STAGES * Cfg::kABytes;
  const unsigned full = base + STAGES * Cfg::kStageBytes, empty = full + 8 * STAGES;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int m0 = blockIdx.y * Cfg::kBM, n0 = blockIdx.x * BN;
  const int kt0 = blockIdx.z * split_steps;
  const int ktiles = min((K + Cfg::kBK - 1) / Cfg::kBK - kt0, split_steps);  // this split's steps (>= 1)
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, CONS * MC);  // every consumer of the cluster frees a stage
    }
    mbar_init_fence();
  }
  if constexpr (MC > 1)
    cluster_sync();  // the cluster's barriers are ready before any block's copies signal them
  else
    __syncthreads();

  if (wg == 0) {  // producer
    if constexpr (CONS > 1) regs_shrink<40>();
    if (t == 0) {
      const unsigned rank = cluster_rank();
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + 8 * s, ((kt / STAGES) - 1) & 1);
        mbar_expect_tx(full + 8 * s, Cfg::kStageBytes);
        tma_load_2d(a_s + s * Cfg::kABytes, &tmA, (kt0 + kt) * Cfg::kBK, m0, full + 8 * s);
#pragma unroll
        for (int j = 0; j < BN / 64; ++j) {
          if constexpr (MC > 1)  // this block's 64 / MC rows of each box, to every block of the cluster
            tma_load_2d_multicast(b_s + s * Cfg::kBBytes + j * 8192 + rank * (8192 / MC), &tmB, n0 + 64 * j,
                                  (kt0 + kt) * Cfg::kBK + rank * (64 / MC), full + 8 * s, (1u << MC) - 1);
          else
            tma_load_2d(b_s + s * Cfg::kBBytes + j * 8192, &tmB, n0 + 64 * j, (kt0 + kt) * Cfg::kBK, full + 8 * s);
        }
      }
      // Clusters: stay until every consumer of the cluster has freed every stage, so that no
      // block's copies into the others' shared memory or arrivals on their barriers outlive them.
      if constexpr (MC > 1)
        for (int kt = max(ktiles, STAGES); kt < ktiles + STAGES; ++kt) mbar_wait(empty + 8 * (kt % STAGES), ((kt / STAGES) - 1) & 1);
    }
    return;
  }

  if constexpr (CONS > 1) regs_grow<232>();
  const int c = wg - 1;
  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(full + 8 * s, (kt / STAGES) & 1);
    const unsigned a0 = a_s + s * Cfg::kABytes + c * 64 * 128;  // this warpgroup's 64 rows of 128 bytes
    const unsigned b0 = b_s + s * Cfg::kBBytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)  // 16 deep each: 32 bytes along A's rows, 16 rows of B's boxes
      wgmma_m64k16<BN, std::is_same<T, bf16>::value>(d, wgmma_desc(a0 + kk * 32, 16, 1024), wgmma_desc(b0 + kk * 2048, 8192, 1024), 1);
    wgmma_commit();
    wgmma_wait<1>();  // step kt - 1 is done with its stage
    if constexpr (MC > 1) {
      if (kt > 0 && t < MC) mbar_arrive_cluster(empty + 8 * ((kt - 1) % STAGES), t);
    } else {
      if (kt > 0 && t == 0) mbar_arrive(empty + 8 * ((kt - 1) % STAGES));
    }
  }
  wgmma_wait<0>();
  if constexpr (MC > 1) {
    if (t < MC) mbar_arrive_cluster(empty + 8 * ((ktiles - 1) % STAGES), t);
    if (m0 >= M) return;  // a block past M that only brought its share of B to the cluster
  }

  if (gridDim.z > 1 && slots) {  // split K, each split's sums in its own slot, the last split adds them
    constexpr int kCT = 128 * CONS, kQ = BN / 8;
    const int ct = threadIdx.x - 128;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x, z = blockIdx.z, last = gridDim.z - 1;
    float4* slot0 = ws + static_cast<std::size_t>(tile) * last * kQ * kCT + ct;  // slots 0..last-1
    if (z < last) {
      float4* buf = slot0 + static_cast<std::size_t>(z) * kQ * kCT;
#pragma unroll
      for (int q = 0; q < kQ; ++q) __stcg(buf + q * kCT, make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]));
      __threadfence();
      asm volatile("bar.sync 1, %0;" ::"r"(kCT) : "memory");
      if (ct == 0) atomicAdd(counters + tile, 1);
      return;
    }
    if (ct == 0) {  // every other split has stored its slot (they wait for nothing: lower block indices)
      while (ld_acquire(counters + tile) != last) __nanosleep(64);
      counters[tile] = 0;  // ready for the next launch (which starts after this one ends)
    }
    asm volatile("bar.sync 1, %0;" ::"r"(kCT) : "memory");
    for (int zz = 0; zz < last; ++zz) {  // in slot order: the result does not depend on timing
      const float4* buf = slot0 + static_cast<std::size_t>(zz) * kQ * kCT;
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const float4 v = __ldcg(buf + q * kCT);
        d[4 * q] += v.x, d[4 * q + 1] += v.y, d[4 * q + 2] += v.z, d[4 * q + 3] += v.w;
      }
    }
  } else if (gridDim.z > 1) {  // split K, in split order through the tile's buffer (above)
    constexpr int kCT = 128 * CONS, kQ = BN / 8;  // consumer threads; float4s each holds
    const int ct = threadIdx.x - 128;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x, z = blockIdx.z, last = gridDim.z - 1;
    float4* buf = ws + static_cast<std::size_t>(tile) * kQ * kCT + ct;
    if (z > 0) {  // wait for split z - 1 (dispatched before this block: a lower block index)
      if (ct == 0)
        while (ld_acquire(counters + tile) != z) __nanosleep(64);
      asm volatile("bar.sync 1, %0;" ::"r"(kCT) : "memory");  // the consumers only (the producer is gone)
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const float4 v = __ldcg(buf + q * kCT);
        d[4 * q] += v.x, d[4 * q + 1] += v.y, d[4 * q + 2] += v.z, d[4 * q + 3] += v.w;
      }
    }
    if (z < last) {
#pragma unroll
      for (int q = 0; q < kQ; ++q) __stcg(buf + q * kCT, make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]));
      __threadfence();  // the sums reach L2 before the next split is let in
      asm volatile("bar.sync 1, %0;" ::"r"(kCT) : "memory");
      if (ct == 0) st_release(counters + tile, z + 1);
      return;
    }
    if (ct == 0) counters[tile] = 0;  // ready for the next launch (which starts after this one ends)
  }

  // D fragment: warp w holds rows 16w..16w+15; d[4i..4i+3] = (r, c), (r, c+1), (r+8, c), (r+8, c+1)
  // with r = 16w + lane/4, c = 8i + 2*(lane%4).
  const int w = t / 32, l = t % 32;
  const int r0 = m0 + c * 64 + 16 * w + l / 4;
  // Any N and ldc: a column pair stores as one 4-byte word where it lies wholly inside C and C's
  // rows keep pairs 4-byte aligned (c_pairs: ldc even, C on 4 bytes), else as two elements.
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    const int gn = n0 + 8 * i + 2 * (l % 4);
    if (gn >= N) continue;
    const bool pair = gn + 1 < N;
    float2 bb = make_float2(0.f, 0.f);
    if (bias)
      bb = pair ? unpack2<T>(*reinterpret_cast<const unsigned*>(bias + gn)) : make_float2(to_f(bias[gn]), 0.f);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int gm = r0 + 8 * h;
      if (gm >= M) continue;
      T* c = C + static_cast<std::size_t>(gm) * ldc + gn;
      const float v0 = act<A>(d[4 * i + 2 * h] + bb.x), v1 = act<A>(d[4 * i + 2 * h + 1] + bb.y);
      if (pair && c_pairs) {
        *reinterpret_cast<unsigned*>(c) = pack2<T>(v0, v1);
      } else {
        c[0] = from_f<T>(v0);
        if (pair) c[1] = from_f<T>(v1);
      }
    }
  }
#endif
}

}  // namespace
}  // namespace bwprof
#endif  // BWPROF_CUDA
