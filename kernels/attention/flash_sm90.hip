// Attention's prefill kernel on NVIDIA Hopper (sm_90a builds; FP16 or BF16; K/V contiguous or paged):
// wgmma on tiles that the bulk tensor copy engine (TMA) brings into shared memory, as the GEMM's
// wgmma_sm90.hip does.
//   Work: a tile is 128 query rows of one head. The grid is persistent (one block an SM); a block
//   takes tile blockIdx.x first, then the next untaken one from a counter in global memory, so the
//   blocks stay busy to the end whatever the tiles cost; in the order tile_order.hpp gives.
//   Roles: warpgroup 0 is the producer: one thread asks the copy engine for a tile's Q (into a ring
//   of Q slots: with more than one, the next tiles' Q arrive while this one is computed), then its K
//   and V tiles of 128 keys (64 at head dim 256) into a ring of K/V stages,
//   128-byte swizzled, each stage completing on its `full` mbarrier. The rings' sizes are runtime
//   parameters, chosen by the host from the rows' length and what fits shared memory (choose_rings).
//   A paged cache is read page by page through the block table where its pages are of 64 keys or
//   more, whole 8-row swizzle groups that tile the key tile (a box a page), else (smaller pages:
//   faster so) by the producer's 128 threads, row by row (cp.async, 16 bytes a thread, into the same
//   swizzled layout), each arriving on `full` once its copies landed.
//   Warpgroups 1 and 2 own 64 rows each: S = Q.K^T with both operands in shared memory (wgmma,
//   K-major), the online softmax on S's registers (FP32), then O += P.V with
//   P straight from those registers as the A operand (16-bit pairs) and V from shared memory. The
//   next tile's S = Q.K^T is issued before this tile's P.V, so that the softmax of one runs while
//   the matrix units work on the other; the stage goes back through its `empty` mbarrier and the
//   Q slot through `qempty` after the tile's last Q.K^T.
//   Head dims 80 and 96 are held 128 wide in shared memory (the copy engine fills the columns past
//   the head with zeros); Q.K^T runs 80 and 96 deep (DK), P.V 80 and 96 wide (DN; 128 on request).
//   Tiles past a row tile's last visible key are not loaded.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "attention/gpu.hpp"
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "attention/flash_sm90.hpp"
#include "common/gpu_wgmma_attn.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace attention {

namespace {

using namespace gpu;
using namespace sm90;

template <class T, int DP, int DK, int DN, int BC_, bool PAGED, bool OTMA>
__global__ void __launch_bounds__(Sm90Cfg<DP, BC_>::kThreads, 1)
    bwprof_attention_flash_sm90(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                                const __grid_constant__ CUtensorMap tmV, const __grid_constant__ CUtensorMap tmO,
                                const Sm90Args a) {
#if defined(BWPROF_WGMMA_DEVICE)
  using C = Sm90Cfg<DP, BC_>;
  constexpr int BC = C::kBc, BR = C::kBr;
  const int QS = a.qslots, ST = a.stages;
  constexpr bool kBf16 = std::is_same<T, bf16>::value;
  extern __shared__ __align__(1024) unsigned char fa_smem[];
  const unsigned base = (smem_u32(fa_smem) + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1 KB
  const unsigned q_s = base, k_s = base + QS * C::kQBytes, v_s = k_s + ST * C::kKvBytes;
  constexpr int MR = C::kMaxRing;
  const unsigned o_s = v_s + ST * C::kKvBytes;  // o_tma: the tile's O, 64 rows a consumer warpgroup
  // A stage's barriers. Head dim 256 (two stages): full/empty guard its K tile and vfull/vempty its V
  // tile, K given back once its Q.K^T is done, a step before the V that shares the stage; with one pair
  // for both, the next K could load only after the whole step's P.V and every step waited for its load
  // (H100, 2026-11-23: B1 H32/8 S16384 causal 9572 -> 7718 us, B2 H16/4 S4096 1114 -> 843, B16 H8/1
  // S512 81.1 -> 71.1). Up to 128 (three stages where they fit), one pair guards both: split there was
  // as fast or slower (D80 S16384 causal 2739 -> 3211 us) and its branches cost D64 time.
  constexpr bool split = DP == 256;
  const unsigned full = o_s + (OTMA ? C::kQBytes : 0), empty = full + 8 * MR, qfull = empty + 8 * MR,
                 qempty = qfull + 8 * MR, vfull0 = qempty + 8 * MR, vempty0 = vfull0 + 8 * MR;
  const unsigned vfull = split ? vfull0 : full, vempty = split ? vempty0 : empty;
  // The tile each Q slot holds, bh * row_tiles + r (-1: no more), written by the producer before its qfull.
  volatile int* sched = reinterpret_cast<volatile int*>(fa_smem + (vempty0 + 8 * MR - smem_u32(fa_smem)));
  volatile int* next_tile = sched + 4;  // paged: the producer's next tile, for its other threads
  int* rowtab = const_cast<int*>(sched + 8);  // paged by cp.async: two key tiles' K/V buffer rows, a key an int
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      mbar_init(full + 8 * s, PAGED && !a.page_tma ? 128 : 1);  // paged by cp.async: every producer thread
      mbar_init(empty + 8 * s, 8);  // every consumer warp
      mbar_init(vfull0 + 8 * s, PAGED && !a.page_tma ? 128 : 1);
      mbar_init(vempty0 + 8 * s, 8);
    }
    for (int s = 0; s < QS; ++s) {
      mbar_init(qfull + 8 * s, 1);
      mbar_init(qempty + 8 * s, 8);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    // 56 registers a producer thread, 224 a consumer one (with 40 the paged producer's loop spilled; H200,
    // 3 passes: paged pages of 16 D96 -5 %, D64 S16384 causal -3.6 %, D96 S128 +3.6 %, others within 1 %).
    regs_shrink<56>();
    // K/V by the copy engine from thread 0, or (paged, a.page_tma false) by the 128 threads with cp.async;
    // one loop each, so that neither holds the other's registers.
    auto produce = [&](auto cp_tag) {
      constexpr bool CP = decltype(cp_tag)::value;
      if (!CP && t != 0) return;
      int tile = blockIdx.x;
      int it = 0, s = 0, use = 0;  // K/V tiles so far, it % ST and it / ST (counted: no division by ST)
      for (int i = 0;; ++i) {
        const int qs = i % QS;
        int next = 0;
        if (tile >= a.tiles) {  // no tile left: the consumers are told so in the next Q slot
          if (t == 0) {
            if (i >= QS) mbar_wait(qempty + 8 * qs, ((i / QS) - 1) & 1);
            sched[qs] = -1;
            mbar_arrive(qfull + 8 * qs);
          }
          break;
        }
        int bh = 0, r = 0;
        tile_at(tile, a.row_tiles, a.bh_total, a.head_chunk, bh, r);
        const Sm90Tile w(a, bh, r, BR, BC);
        const int b = w.bh / a.heads, kvh = (w.bh % a.heads) / a.group;
        // Paged by the copy engine: the block-table entries of a key tile are read a tile ahead (the
        // first at once), so that their latency hides behind the copies of the tile before.
        constexpr int kMaxPages = BC / 8;
        const int bs = a.block_size, pages = PAGED && !CP ? BC / bs : 0;
        int page_t[kMaxPages];
        auto read_pages = [&](int kt) {
#pragma unroll
          for (int pg = 0; pg < kMaxPages; ++pg)
            if (pg < pages) page_t[pg] = a.table[b * a.blocks_per_seq + min((kt * BC) / bs + pg, a.blocks_per_seq - 1)];
        };
        if (PAGED && !CP) read_pages(0);
        // Paged by cp.async: key's K/V buffer row, (entry * kv_heads + kvh) * bs + key % bs, its table entry
        // read a tile ahead (past the end: the last key's; pages of 2^n keys: no division).
        const int bs_shift = (a.block_size & (a.block_size - 1)) == 0 ? __ffs(a.block_size) - 1 : -1;
        auto kv_entry = [&](int key) {
          const int pos = min(key, a.seq_kv - 1);
          return a.table[b * a.blocks_per_seq + (bs_shift >= 0 ? pos >> bs_shift : pos / bs)];
        };
        auto kv_row = [&](int entry, int key) {
          const int pos = min(key, a.seq_kv - 1);
          return (entry * a.kv_heads + kvh) * bs + (bs_shift >= 0 ? pos & (bs - 1) : pos % bs);
        };
        int entry_next = CP && t < BC ? kv_entry(t) : 0;
        // Q of the tile into slot qs, and the next tile taken (thread 0). A slot still in use is waited for only
        // once the tile's first ST - 1 key tiles are on their way (their stages come free before the slot), so
        // that the consumers find the new tile's first keys loaded; waiting for the slot first drained the ring
        // at every tile (H200: D64 B4 H32/8 S1024 97.6 -> 86.5 us, paged pages of 16 D64 -10 %, D128 -2 %).
        const int q_at = i >= QS ? min(ST - 1, w.ntiles - 1) : 0;
        for (int kt = 0; kt < w.ntiles; ++kt, ++it, s = s + 1 < ST ? s + 1 : (++use, 0)) {
          if (t == 0 && kt == q_at) {
            if (i >= QS) mbar_wait(qempty + 8 * qs, ((i / QS) - 1) & 1);
            sched[qs] = bh * a.row_tiles + r;
            mbar_expect_tx(qfull + 8 * qs, C::kQBytes);
#pragma unroll
            for (int j = 0; j < DP / 64; ++j)
              tma_load_2d(q_s + qs * C::kQBytes + j * BR * 128, &tmQ, 64 * j, w.bh * a.seq_q + w.q0, qfull + 8 * qs);
            next = atomicAdd(a.counter, 1) + static_cast<int>(gridDim.x);  // needed after the K/V loads
          }
          const unsigned ks = k_s + s * C::kKvBytes, vs = v_s + s * C::kKvBytes;
          if (!PAGED) {
            if (use > 0) mbar_wait(empty + 8 * s, (use - 1) & 1);
            mbar_expect_tx(full + 8 * s, split ? C::kKvBytes : 2 * C::kKvBytes);
            const int row = (b * a.kv_heads + kvh) * a.seq_kv + kt * BC;
#pragma unroll
            for (int j = 0; j < DP / 64; ++j)  // 64-column boxes (128-byte rows)
              tma_load_2d(ks + j * BC * 128, &tmK, 64 * j, row, full + 8 * s);
            if (split) {
              if (use > 0) mbar_wait(vempty + 8 * s, (use - 1) & 1);
              mbar_expect_tx(vfull + 8 * s, C::kKvBytes);
            }
#pragma unroll
            for (int j = 0; j < DP / 64; ++j) tma_load_2d(vs + j * BC * 128, &tmV, 64 * j, row, vfull + 8 * s);
          } else if (!CP) {  // whole pages of block_size rows; past the sequence's last page, that page again
            if (use > 0) mbar_wait(empty + 8 * s, (use - 1) & 1);
            mbar_expect_tx(full + 8 * s, split ? C::kKvBytes : 2 * C::kKvBytes);
#pragma unroll
            for (int pg = 0; pg < kMaxPages; ++pg) {
              if (pg >= pages) break;
              const int r = (page_t[pg] * a.kv_heads + kvh) * bs;
#pragma unroll
              for (int j = 0; j < DP / 64; ++j) tma_load_2d(ks + j * BC * 128 + pg * bs * 128, &tmK, 64 * j, r, full + 8 * s);
            }
            if (split) {
              if (use > 0) mbar_wait(vempty + 8 * s, (use - 1) & 1);
              mbar_expect_tx(vfull + 8 * s, C::kKvBytes);
            }
#pragma unroll
            for (int pg = 0; pg < kMaxPages; ++pg) {
              if (pg >= pages) break;
              const int r = (page_t[pg] * a.kv_heads + kvh) * bs;
#pragma unroll
              for (int j = 0; j < DP / 64; ++j) tma_load_2d(vs + j * BC * 128 + pg * bs * 128, &tmV, 64 * j, r, vfull + 8 * s);
            }
            if (kt + 1 < w.ntiles) read_pages(kt + 1);
          } else {
            // Paged by cp.async: the 128 threads copy the tile row by row through the block table, 16 bytes each
            // (sm90_copy_rows). Thread t puts key t's row (its table entry read a tile ahead) in shared memory for
            // all.
            int* rows = rowtab + (it & 1) * BC;
            if (t < BC) rows[sm90_row_slot<DP, BC>(t)] = kv_row(entry_next, kt * BC + t);
            if (t == 0 && kt + 1 == w.ntiles) next_tile[i & 1] = next;  // (the atomic long done but in short tiles)
            asm volatile("bar.sync 1, 128;\n" ::: "memory");  // rows[] is whole (and the other half free)
            if (kt + 1 < w.ntiles && t < BC) entry_next = kv_entry((kt + 1) * BC + t);
            if (use > 0) mbar_wait(empty + 8 * s, (use - 1) & 1);
            if (split && use > 0) mbar_wait(vempty + 8 * s, (use - 1) & 1);  // (both at once here)
            if (kt * BC + BC <= a.seq_kv)
              sm90_copy_rows<T, DP, BC, false>(ks, vs, rows, t, kt, a);
            else
              sm90_copy_rows<T, DP, BC, true>(ks, vs, rows, t, kt, a);
            mbar_arrive_cp_async(full + 8 * s);
            if (split) mbar_arrive_cp_async(vfull + 8 * s);
          }
        }
        if (CP) next = next_tile[i & 1];  // every producer thread takes the next tile that thread 0 got (above)
        tile = next;
      }
    };
    const bool cp_load = PAGED && !a.page_tma;
    if (cp_load) {
      if constexpr (PAGED) produce(std::true_type{});
    } else {
      produce(std::false_type{});
    }
    if (!cp_load && t != 0) return;
    // Every block has taken its last tile: the last one to get here resets the counter for the next launch.
    if (t == 0 && atomicAdd(a.counter + 1, 1) == static_cast<int>(gridDim.x) - 1) {
      atomicExch(a.counter, 0);
      atomicExch(a.counter + 1, 0);
    }
    if (cp_load) asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
    return;
  }

  regs_grow<224>();
  // Head dims 128 and 256: the wgmma descriptors from their buffers' bases moved by constant offsets
  // (wgmma_desc_at; 12 instructions a wgmma down to 4, with c known warp-uniform through the shuffle).
  // H200, one call, 3 passes: D256 -3.5 to -5.9 % at seven points, D128 -2.3 to -5.4 %, paged D128 -6.8 %;
  // at head dims 64, 80 and 96 the consumers were scheduled anew and ran 2.9-5.4 % slower (paged D80 2.1 %
  // faster; docs/notes/attention.md#d256): their descriptors are built as before.
  constexpr bool desc_at = DP == 256 || DK == 128;
  const int c = desc_at ? __shfl_sync(0xffffffffu, wg - 1, 0) : wg - 1;  // this warpgroup's rows: q0 + 64 c ..
  const int w4 = t / 32, l = t % 32, tq = l % 4;
  Sm90Ring kv, q;
  for (;; q.next(QS)) {
    const int qs = q.slot;
    mbar_wait(qfull + 8 * qs, q.phase);
    const int tile = sched[qs];
    if (tile < 0) break;
    const Sm90Tile w(a, tile / a.row_tiles, tile % a.row_tiles, BR, BC);
    const int r0 = w.q0 + c * 64 + 16 * w4 + l / 4;  // this thread's rows: r0 and r0 + 8
    const int row_first = w.q0 + c * 64;
    const unsigned qa0 = q_s + qs * C::kQBytes + c * 64 * 128;
    float o[DN / 2];
#pragma unroll
    for (int x = 0; x < DN / 2; ++x) o[x] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, lsum[2] = {0.f, 0.f}, corr[2];
    float sc[BC / 2];
    unsigned pa[BC / 16][4];
    const WgmmaDescs<desc_at> dq(qa0, 16, 1024);
    auto qk = [&](int st) {  // S = Q.K^T of stage st, issued (not waited for)
      const WgmmaDescs<desc_at> dk(k_s + st * C::kKvBytes, 16, 1024);
#pragma unroll
      for (int kk = 0; kk < DK / 16; ++kk)  // 16 deep each: 32 bytes along the 128-byte rows of a box
        wgmma_ss_kmajor<BC, kBf16>(sc, dq.at((kk / 4) * BR * 128 + (kk % 4) * 32),
                                   dk.at((kk / 4) * BC * 128 + (kk % 4) * 32), kk > 0);
    };
    auto pv = [&](int st) {  // O += P.V of stage st, issued (not waited for)
      const WgmmaDescs<desc_at> dv(v_s + st * C::kKvBytes, BC * 128, 1024);
#pragma unroll
      for (int kc = 0; kc < BC / 16; ++kc)  // 16 keys each: 16 rows of V's 128-byte boxes
        wgmma_rs<DN, kBf16>(o, pa[kc], dv.at(kc * 16 * 128));
    };
    auto edge = [&](int kt0) { return kt0 + BC > a.seq_kv || (a.causal && kt0 + BC - 1 > row_first + a.seq_kv - a.seq_q); };
    auto release = [&](unsigned bar) {  // this warp is done with what `bar` guards
      if (l == 0) mbar_arrive(bar);
    };
    // O's factor from the last softmax (its rows' new maximum), applied before the P.V of the tile
    // whose scores set it: at head dim 256 early, in the next step once that step's Q.K^T is issued (the
    // 128 multiplies a thread run beside the matrix units: with K/V split, 12906 against 13099 us summed
    // over the six long D256 sweep points, H100 2026-11-23); else late, at the end of the step that
    // computed it, after the step's P.V (early was 1-7 % slower at D80-128 and long D64).
    constexpr bool early = DP == 256;
    // Head dim 256: the lazy reference (sm90_softmax), O's 128 multiplies a step skipped where no row of the
    // warp moved it. H200, one call, 3 passes, beside the descriptors alone: -0.7 to -10.7 % at seven D256
    // points (B1 H32/8 S16384 causal 6844 -> 6344 us); at head dim 128 -0.2 to +3.0 %, at 64 +7 %, at 80
    // +4.9 %: not there. Its worst case, scores=rising (the reference moves at nearly every step): +0.5 to
    // +4.2 % at five D256 points beside the same kernel without it.
    constexpr bool lazy = DP == 256;
    auto rescale = [&]() {
      if constexpr (lazy) {  // skipped where no row of the warp moved its reference (corr all 1)
        if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f)) return;
      }
#pragma unroll
      for (int x = 0; x < DN / 8; ++x)
        o[4 * x] *= corr[0], o[4 * x + 1] *= corr[0], o[4 * x + 2] *= corr[1], o[4 * x + 3] *= corr[1];
    };
    auto to_pa = [&]() {  // P as the A operand: keys 16 kc .. 16 kc + 15 as 16-bit pairs
#pragma unroll
      for (int kc = 0; kc < BC / 16; ++kc)
#pragma unroll
        for (int x = 0; x < 4; ++x) pa[kc][x] = pack2<T>(sc[8 * kc + 2 * x], sc[8 * kc + 2 * x + 1]);
    };
    // The first key tile's scores.
    int s = kv.slot;
    mbar_wait(full + 8 * s, kv.phase);
    if (PAGED && !a.page_tma) fence_async_shared();  // the producer threads' cp.async writes, before wgmma reads them
    fence_regs<DN / 2>(o);
    fence_regs<BC / 2>(sc);
    wgmma_fence();
    qk(s);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs<BC / 2>(sc);
    if (split) release(empty + 8 * s);  // K's stage
    if (w.ntiles == 1) release(qempty + 8 * qs);
    sm90_softmax<BC, lazy>(sc, m, lsum, corr, 0, r0, tq, edge(0), a);
    to_pa();
    // Every key tile but the last: the next tile's scores, then this one's P.V, both in flight; the
    // softmax of the next runs once its scores are in, while P.V may still run.
    for (int kt = 0; kt + 1 < w.ntiles; ++kt) {
      s = kv.slot;
      const int ph = kv.phase;
      kv.next(ST);
      const int s1 = kv.slot;
      mbar_wait(full + 8 * s1, kv.phase);
      if (PAGED && !a.page_tma) fence_async_shared();
      fence_regs<BC / 2>(sc);
      fence_regs<DN / 2>(o);
      wgmma_fence();
      qk(s1);
      wgmma_commit();
      if constexpr (early) rescale();  // this tile's factor on O while the next tile's scores run, before its P.V
      if (split) mbar_wait(vfull + 8 * s, ph);
      if constexpr (early) {  // (up to head dim 128 the two groups go out back to back, as before the early rescale)
        fence_regs<DN / 2>(o);
        wgmma_fence();
      }
      pv(s);
      wgmma_commit();
      wgmma_wait<1>();
      fence_regs<BC / 2>(sc);
      if (split) release(empty + 8 * s1);  // K's stage, a step before its V's
      if (kt + 2 == w.ntiles) release(qempty + 8 * qs);
      sm90_softmax<BC, lazy>(sc, m, lsum, corr, (kt + 1) * BC, r0, tq, edge((kt + 1) * BC), a);
      wgmma_wait<0>();
      fence_regs<DN / 2>(o);
      release(vempty + 8 * s);
      if (!early) rescale();
      to_pa();
    }
    s = kv.slot;  // the last key tile's P.V
    if (early) rescale();
    if (split) mbar_wait(vfull + 8 * s, kv.phase);
    fence_regs<DN / 2>(o);
    wgmma_fence();
    pv(s);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs<DN / 2>(o);
    release(vempty + 8 * s);
    kv.next(ST);
    // O normalized and stored: from registers (flash_sm90.hpp), or (o_tma) by the copy engine from
    // the O buffer's half of this warpgroup.
    if constexpr (OTMA)
      sm90_store_o_tma<T, DP, DN>(o, lsum, o_s + c * (C::kQBytes / 2), &tmO, row_first, w.bh, c, t, a);
    else
      sm90_store_o_regs<T, DN>(o, lsum, r0, w.bh, l, a);
  }
  if (OTMA && t == 0) bulk_wait();  // the last tile's O stored before the block's shared memory goes
#endif
}

class FlashSm90Impl final : public FlashSm90 {
 public:
  FlashSm90Impl(GpuBackend& g, const Launch& l)
      : bf16_(l.dtype == DType::kBF16), dp_(l.D <= 64 ? 64 : l.D <= 128 ? 128 : 256),
        counter_(2 * sizeof(int), "attention tile counter") {
    counter_.fill(0);
    // Key tiles of 128, 64 at head dim 256 (two stages and the Q tile in 192 KB; a tile of 80 keys
    // was 13% slower at the longest causal H100 sweep point, 3-5% faster at three of seven).
    const int bc = dp_ <= 128 ? 128 : 64;
    // Paged K/V by the copy engine, a box a page, where pages of 64 keys or more are whole 8-row
    // swizzle groups tiling the key tile; else by the producer's threads with cp.async: the faster of
    // the two at each page size (docs/notes/attention.md#paged-prefill).
    const bool tma_fits = l.paged && l.kv.block_size % 8 == 0 && bc % l.kv.block_size == 0;
    const bool page_tma = tma_fits && l.kv.block_size >= 64;
    const int kv_box = page_tma ? int(l.kv.block_size) : bc;
    tmQ_ = b16_tensor_map(l.Q, bf16_, l.B * l.H * l.Sq, l.D, l.D, 64, 128);
    tmK_ = b16_tensor_map(l.K, bf16_, l.kv_rows, l.D, l.D, 64, kv_box);
    tmV_ = b16_tensor_map(l.V, bf16_, l.kv_rows, l.D, l.D, 64, kv_box);
    const int br = 128;
    args_ = Sm90Args{l.O, l.K, l.V, l.kv.table, counter_.get<int>(), int(l.H), int(l.Hkv), int(l.Sq), l.kv.seq_kv, l.D,
                     l.group, l.kv.block_size, l.kv.blocks_per_seq, int((l.Sq + br - 1) / br), 0, l.scale_log2,
                     l.causal, true, page_tma, 2, 1};
    // O stored 16 bytes a thread at head dims 80, 96 and 256, 4 bytes at 64 and 128: the faster at
    // each on the H100 sweep (the same note).
    args_.store16 = l.D != 64 && l.D != 128;
    args_.tiles = int(args_.row_tiles * l.B * l.H);
    // One block an SM, each taking tiles until none is left.
    grid_ = std::min<std::int64_t>(args_.tiles, g.sm_count());
    // The tiles' order (tile_order.hpp).
    const int bh_total = args_.bh_total = int(l.B * l.H);
    const auto cost = row_tile_costs(args_.row_tiles, br, bc, args_.seq_q, args_.seq_kv, l.causal);
    args_.head_chunk = choose_head_chunk(cost, bh_total, int(l.group), int(grid_));
    // O written to shared memory and stored by the copy engine (the consumers go on to their next
    // tile without waiting for the stores) for contiguous K/V at head dim 64 up to 1024 keys and at
    // 80-128 up to 512: there it won on the H100 sweep, beyond it the buffer costs a K/V stage and lost
    // (the same note). Paged K/V and head dim 256 store from registers; no buffer is held there.
    const bool o_short = (dp_ == 64 && l.kv.seq_kv <= 1024) || (dp_ == 128 && l.kv.seq_kv <= 512);
    o_tma_ = o_short && !l.paged;
    choose_rings(l, bc);
    if (o_tma_) tmO_ = b16_tensor_map_heads(l.O, bf16_, l.B * l.H, l.Sq, l.D, 64, 64);
    res_ = dispatch(l, false);
  }
  Resources run(const Launch& l, bool launch) override { return launch ? dispatch(l, true) : res_; }

 private:
  // The rings: K/V stages (the key tiles ahead) and Q slots (the next row tiles' Q loaded while this
  // one's is computed). Rows of one key tile: two stages and two Q slots where they fit (the next Q
  // arrives while the single key tile is computed); else three stages and one slot where they fit,
  // else two and one: the fastest on the H100 sweep (the same note).
  void choose_rings(const Launch& l, int bc) {
    constexpr int lim = kSm90SmemMax;
    if (o_tma_ && sm90_smem_bytes(dp_, bc, 2, 1, l.paged, true) > lim) o_tma_ = false;
    const bool o = o_tma_;
    const auto smem_bytes = [&](int stages, int qslots) { return sm90_smem_bytes(dp_, bc, stages, qslots, l.paged, o); };
    int st = 2, qs = 1;
    if (l.kv.seq_kv <= bc && smem_bytes(2, 2) <= lim)
      qs = 2;
    else if (smem_bytes(3, 1) <= lim)
      st = 3;
    if (smem_bytes(st, qs) > lim)
      BWPROF_INVALID("head_dim: " + std::to_string(st) + " K/V stages and " + std::to_string(qs) + " Q slots" +
                     (o ? " and the O buffer" : "") + " need " + std::to_string(smem_bytes(st, qs)) +
                     " bytes of shared memory at this head dim, more than " + std::to_string(lim));
    args_.stages = st;
    args_.qslots = qs;
  }
  Resources dispatch(const Launch& l, bool launch) {
    return bf16_ ? by_dim<bf16>(l, launch) : by_dim<__half>(l, launch);
  }
  // Head dims 80 and 96: Q.K^T 80 (96) deep; P.V 80 (96) wide (an N that ends inside the second
  // 64-column swizzle group of V; faster than 128 wide at every point of an H100 sweep).
  template <class T>
  Resources by_dim(const Launch& l, bool launch) {
    switch (l.D) {
      case 64: return by_paged<T, 64, 64, 64>(l, launch);
      case 80: return by_paged<T, 128, 80, 80>(l, launch);
      case 96: return by_paged<T, 128, 96, 96>(l, launch);
      case 128: return by_paged<T, 128, 128, 128>(l, launch);
      default: return by_paged<T, 256, 256, 256>(l, launch);
    }
  }
  template <class T, int DP, int DK, int DN>
  Resources by_paged(const Launch& l, bool launch) {
    if constexpr (DP > 128) {
      return l.paged ? go<T, DP, DK, DN, 64, true>(l, launch) : go<T, DP, DK, DN, 64, false>(l, launch);
    } else {
      return l.paged ? go<T, DP, DK, DN, 128, true>(l, launch) : go<T, DP, DK, DN, 128, false>(l, launch);
    }
  }
  // O's store is a template argument, not a launch flag: one kernel with both was 10 % slower at D64 B1
  // H32/8 S16384 causal (H100; docs/notes/attention.md#o-store). Only contiguous K/V at head dims up to
  // 128 can take the copy engine's store.
  template <class T, int DP, int DK, int DN, int BC, bool PAGED>
  Resources go(const Launch& l, bool launch) {
    using C = Sm90Cfg<DP, BC>;
    auto* fn = &bwprof_attention_flash_sm90<T, DP, DK, DN, BC, PAGED, false>;
    if constexpr (!PAGED && DP <= 128) {
      if (o_tma_) fn = &bwprof_attention_flash_sm90<T, DP, DK, DN, BC, PAGED, true>;
    }
    const int smem = sm90_smem_bytes(DP, BC, args_.stages, args_.qslots, PAGED, o_tma_);
    if (!launch) {
      // The most any rings take (a kernel's launches differ in shared memory now: one instance's
      // setting must not refuse another's larger launch).
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, kSm90SmemMax));
      return kernel_resources(fn, C::kThreads, smem);
    }
    fn<<<static_cast<unsigned>(grid_), C::kThreads, smem, l.stream>>>(tmQ_, tmK_, tmV_, tmO_, args_);
    BWPROF_CHECK_LAUNCH("bwprof_attention_flash_sm90");
    return {};
  }

  bool bf16_;
  // O written to shared memory and stored by the copy engine (one thread a warpgroup): the host's
  // choice, passed to the kernel as its OTMA template argument (go()).
  bool o_tma_ = false;
  int dp_;
  DeviceBuffer counter_;
  CUtensorMap tmQ_{}, tmK_{}, tmV_{}, tmO_{};
  Sm90Args args_{};
  std::int64_t grid_ = 1;
  Resources res_;
};

}  // namespace

bool sm90_takes(const GpuBackend& g, const Launch& l) {
#if defined(BWPROF_HAVE_SM90A)
  // 16-bit, an sm_90 device, row counts the copy engine's 32-bit coordinates hold (a paged cache,
  // read by the producer's threads, any page size).
  const std::int64_t lim = 2147483647;
  if (g.info().arch != "sm_90" || l.dtype == DType::kF32 || l.B * l.H * l.Sq > lim || l.kv_rows > lim) return false;
  return l.D == 64 || l.D == 80 || l.D == 96 || l.D == 128 || l.D == 256;
#else
  (void)g, (void)l;
  return false;
#endif
}

std::unique_ptr<FlashSm90> make_flash_sm90(GpuBackend& g, const Launch& l) {
  if (!sm90_takes(g, l)) return nullptr;
  return std::make_unique<FlashSm90Impl>(g, l);
}

}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
