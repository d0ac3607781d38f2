// The `tensor` GEMM on NVIDIA Hopper (sm_90a builds): wgmma on tiles that the bulk tensor copy
// engine (TMA) brings into shared memory; FP16 or BF16 operands, FP32 accumulation.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_wgmma.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

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
// Split K by slots (`slots`, the default; BWPROF_GEMM_REDUCE=chain for the chain above): the splits but the last store their sums
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

// Tile shapes, largest first: the first whose grid fills the GPU, else the last (most blocks).
enum class WgTile { k128x256, k128x128, k64x128, k64x64 };

// The estimated time (us) that `sp` splits of a bm x bn tile take to meet, after their steps: a
// fixed kSplitUs (the last split's wait and the extra pass over the tile's sums), plus the bytes.
// Chain: each split but the first reads the tile's FP32 sums and each but the last writes them,
// one after another, ~30 GB/s a link on an H100 (measured: WgmmaRunner's comment). Slots (the
// default): the splits write side by side (one pass), then the last reads sp - 1 passes, at
// kSlotsGBs. Fitted to the H100 sweep of session 6 round 1 (gemm_sweep.py --large, fp16, us):
// slots beat the chain at the same split wherever the split matters (M = 128 N = 1000 K = 11008
// s4 23.3 -> 20.2, M = 128 N = 4097 K = 4095 s4 58.9 -> 52.5, M = 1000 N = 1000 K = 11008 s2 62.6 ->
// 61.6, s4 67.7 -> 60.9; M >= 4096, where one split is chosen, within 1.5 %); s2 at M = N = 1000 on
// 128x128 tiles costs ~3.4 us more than the chain model's compute (~38 GB/s for 2 x 64 KB). The
// fixed 4 us: each split still cost 7-10 us more than the old estimate at M = 128 (N = 4096 K =
// 4096: 64x128 s2 est 14.8, took 22.1; 64x64 s1 est 15.7, took 19.1), so without it the search
// split where one block a tile was faster (64x64 unsplit, 19.1 against the chosen 23.2).
constexpr double kChainGBs = 30, kSlotsGBs = 30, kSplitUs = 4;
inline double split_us(std::int64_t sp, int bm, int bn, bool slots) {
  const double tile = 4.0 * bm * bn;
  return kSplitUs + (slots ? double(sp) * tile / (kSlotsGBs * 1e3) : 2.0 * double(sp - 1) * tile / (kChainGBs * 1e3));
}

class WgmmaRunner final : public GemmRunner {
 public:
  WgmmaRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : bf16_(dt == DType::kBF16), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    gemm::check_int_sizes(s);
    // The tile and K split with the least estimated time: waves of blocks (one block an SM) times
    // a block's work over its rate, plus, split, the chain through the tile's buffer: each split
    // but the first reads it and each but the last writes it, one after another, a tile at ~30
    // GB/s a link. Rates: TFLOP/s of each tile shape at 4096^3 on an H100 (all four near 97 % wave
    // efficiency there), 647, 527, 350 and 282. The chain's rate is what the H100 measured (sweep
    // at daea3e8, candidates by splits): M = N = 1000 K = 11008 on 128x256 tiles took 100, 62.8,
    // 67.8 and 79.6 us at 1, 2, 4 and 8 splits, 6-13 us a link of 256 KB (20-40 GB/s; the first
    // estimate, 150 GB/s, split 4 ways there, and at M=128 N=4095 K=4097, M=33 N=11009 K=1000 and
    // M=8192 N=4097 K=4095, each slower than fewer splits). At 30 GB/s the estimate picks what was
    // fastest at each: 128x128 with 2 splits (M = N = 1000, 128 blocks), 64x128 with 2 (M = 128),
    // no split at M = 33 or 4096^3, 2 splits at M = 8192. Splits keep at least 4 steps of 64 each,
    // at most kWgmmaMaxSplits (choice.hpp). BWPROF_GEMM_TILE / BWPROF_GEMM_SPLITS restrict the
    // search, BWPROF_GEMM_REDUCE=chain has the splits meet by the chain instead of slots
    // (split_us), for measurement.
    const std::int64_t sms = g.sm_count();
    sms_ = static_cast<int>(sms);
    struct Option { WgTile t; int bm, bn; double rate; const char* name; };
    const Option opts[] = {{WgTile::k128x256, 128, 256, 647, "128x256"}, {WgTile::k128x128, 128, 128, 527, "128x128"},
                           {WgTile::k64x128, 64, 128, 350, "64x128"}, {WgTile::k64x64, 64, 64, 282, "64x64"}};
    const std::int64_t ksteps = (s.K + 63) / 64;
    const std::string want_tile = gemm::tile_knob();
    const auto want_sp = knob_int("BWPROF_GEMM_SPLITS", 1, 65535);
    const bool want_slots = knob_choice("BWPROF_GEMM_REDUCE", {"slots", "chain"}).value_or(0) == 0;
    const bool tile_known = want_tile.find('x') != std::string::npos;
    double best = -1;
    int bm = 64, bn = 64;  // the chosen tile's
    const char* name = "";
    for (const Option& o : opts) {
      if (tile_known && want_tile != o.name) continue;
      const std::int64_t tiles = ((s.M + o.bm - 1) / o.bm) * ((s.N + o.bn - 1) / o.bn);
      std::int64_t lo = 1, hi = std::min<std::int64_t>(gemm::kWgmmaMaxSplits, std::max<std::int64_t>(1, ksteps / 4));
      if (want_sp) lo = hi = std::min<std::int64_t>(*want_sp, ksteps);
      for (std::int64_t sp = lo; sp <= hi; ++sp) {
        const std::int64_t steps = (ksteps + sp - 1) / sp, sp_real = (ksteps + steps - 1) / steps;
        const double block_us = 2.0 * o.bm * o.bn * 64 * steps / (o.rate * 1e6 / sms);
        double est = static_cast<double>((tiles * sp_real + sms - 1) / sms) * block_us;
        if (sp_real > 1) est += split_us(sp_real, o.bm, o.bn, want_slots);
        if (best < 0 || est < best)
          best = est, tile_ = o.t, bm = o.bm, bn = o.bn, splits_ = static_cast<int>(sp_real), tiles_ = tiles, name = o.name;
      }
    }
    if (best < 0)
      BWPROF_INVALID("BWPROF_GEMM_TILE: no wgmma tile " + want_tile + " (128x256, 128x128, 64x128, 64x64)");
    split_steps_ = static_cast<int>((ksteps + splits_ - 1) / splits_);
    splits_ = static_cast<int>((ksteps + split_steps_ - 1) / split_steps_);
    if (splits_ > 65535 || tiles_ > 2147483647) BWPROF_INVALID("M/N/K: too large for the wgmma GEMM's grid");
    if (splits_ > 1) {
      const double sums_bytes = static_cast<double>(tiles_) * bm * bn * sizeof(float);  // every tile once
      // Slots need (splits - 1) tiles' sums: beyond kWgmmaSlotsMaxBytes the chain runs instead.
      slots_ = want_slots && sums_bytes * (splits_ - 1) <= gemm::kWgmmaSlotsMaxBytes;
      ws_ = DeviceBuffer(static_cast<std::size_t>(sums_bytes * (slots_ ? splits_ - 1 : 1)), "GEMM split-K tile sums");
      counters_ = DeviceBuffer(static_cast<std::size_t>(tiles_) * sizeof(int), "GEMM split-K tile counters");
      counters_.fill(0);
    }
    // Clusters of two blocks along M sharing B's stages from 256 rows where B's rows are off 128
    // bytes, and from 128 rows where the row tiles pair up (choice.hpp's clusters_pay, measured
    // there); BWPROF_GEMM_CLUSTER=1|2 decides instead.
    cluster_ = gemm::clusters_pay(s.M, gemm::rows_off128(B, s.ldb), (s.M + bm - 1) / bm) ? 2 : 1;
    if (const auto c = knob_choice("BWPROF_GEMM_CLUSTER", {"1", "2"})) cluster_ = *c + 1;
    gemm::explain("wgmma " + std::string(name) + " splits " + std::to_string(splits_) + (slots_ ? " by slots" : "") +
                  (cluster_ > 1 ? " cluster 2 sharing B" : std::string()) + " (" +
                  std::to_string(tiles_ * splits_) + " blocks, estimate " + std::to_string(static_cast<int>(best)) + " us)");
    res_ = dispatch(nullptr, false);
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(hipStream_t st, bool launch) {
    return cluster_ > 1 ? tile<2>(st, launch) : tile<1>(st, launch);
  }
  template <int MC>
  Resources tile(hipStream_t st, bool launch) {
    switch (tile_) {
      case WgTile::k128x256: return go<2, 256, 4, MC>(st, launch);
      case WgTile::k128x128: return go<2, 128, 6, MC>(st, launch);
      case WgTile::k64x128: return go<1, 128, 8, MC>(st, launch);
      default: return go<1, 64, 8, MC>(st, launch);
    }
  }
  template <int CONS, int BN, int ST, int MC>
  Resources go(hipStream_t st, bool launch) {
    return bf16_ ? go_t<bf16, CONS, BN, ST, MC>(st, launch) : go_t<__half, CONS, BN, ST, MC>(st, launch);
  }
  template <class T, int CONS, int BN, int ST, int MC>
  Resources go_t(hipStream_t st, bool launch) {
    using Cfg = WgCfg<CONS, BN, ST>;
    return gemm::with_act(act_, [&](auto a) {
      auto* fn = &bwprof_gemm_wgmma<T, CONS, BN, ST, MC, decltype(a)::value>;
      if (!launch) {
        tmA_ = b16_tensor_map(A_, bf16_, s_.M, s_.K, s_.lda, 64, Cfg::kBM);
        tmB_ = b16_tensor_map(B_, bf16_, s_.K, s_.N, s_.ldb, 64, 64 / MC);  // each block of a cluster brings 64 / MC rows
        BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                             hipFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
        return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
      }
      const unsigned m_tiles = static_cast<unsigned>((s_.M + Cfg::kBM - 1) / Cfg::kBM);
      const dim3 grid(static_cast<unsigned>((s_.N + BN - 1) / BN), (m_tiles + MC - 1) / MC * MC, static_cast<unsigned>(splits_));
      const int c_pairs = s_.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(C_) % 4 == 0;
      hipLaunchConfig_t cfg{};
      cfg.gridDim = grid, cfg.blockDim = dim3(Cfg::kThreads), cfg.dynamicSmemBytes = Cfg::kSmemBytes, cfg.stream = st;
      hipLaunchAttribute attr[1];
      attr[0].id = hipLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 1, attr[0].val.clusterDim.y = MC, attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr, cfg.numAttrs = MC > 1 ? 1 : 0;
      BWPROF_GPU_CHECK(hipLaunchKernelEx(&cfg, fn, tmA_, tmB_, static_cast<const T*>(bias_), static_cast<T*>(C_),
                                         ws_.get<float4>(), counters_.get<int>(), int(s_.M), int(s_.N), int(s_.K),
                                         int(s_.ldc), split_steps_, c_pairs, int(slots_)));
      BWPROF_CHECK_LAUNCH("bwprof_gemm_wgmma");
      return Resources{};
    });
  }
  bool bf16_;
  Shape s_;
  const void* A_;
  const void* B_;
  void* C_;
  const void* bias_;
  Act act_;
  WgTile tile_ = WgTile::k64x64;
  int splits_ = 1, split_steps_ = 1, sms_ = 1, cluster_ = 1;
  bool slots_ = false;
  std::int64_t tiles_ = 1;
  DeviceBuffer ws_, counters_;
  CUtensorMap tmA_{}, tmB_{};
  Resources res_;
};

}  // namespace

// The Hopper path of `tensor`: wgmma + TMA (kernel above). Available where this build carries
// sm_90a code (BWPROF_HAVE_SM90A) and the device is sm_90; BWPROF_GEMM_WGMMA=0 turns it off (the
// mma.sync kernel then runs), for comparisons. It fits where the copy engine can address A and B:
// 16-byte aligned starts and rows (lda, ldb multiples of 8); any M, N, K (the copy engine fills
// what lies past them with zeros, the epilogue stores inside C only, at any ldc). Small M too:
// rows past M arrive as zeros, and the deep ring keeps a short, K-long loop fed where mma.sync
// waited. Operands that do not fit can be copied into aligned scratch first (pad.hip).
bool gemm::wgmma_available(GpuBackend& g) {
#if defined(BWPROF_HAVE_SM90A)
  if (!knob_switch("BWPROF_GEMM_WGMMA").value_or(true)) return false;
  return g.info().arch == "sm_90";
#else
  (void)g;
  return false;
#endif
}

bool gemm::tma_addressable(const void* p, std::int64_t ld) {
  return on16(p) && ld % 8 == 0;
}

bool gemm::wgmma_fits(GpuBackend& g, const Shape& s, const void* A, const void* B, const void* C) {
  (void)C;
  return wgmma_available(g) && tma_addressable(A, s.lda) && tma_addressable(B, s.ldb);
}

std::unique_ptr<GemmRunner> gemm::make_wgmma_sm90(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                  void* C, const void* bias, Act act) {
  return std::make_unique<WgmmaRunner>(g, dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
