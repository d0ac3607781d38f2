// Attention's decode kernel on NVIDIA matrix units (FP16 or BF16, sm_80+; K/V contiguous or paged):
// for a few query rows per KV head (a decode step: one position of the `group` query heads that
// share the KV head, or a few positions), where the time is reading K and V once.
//   A block takes one KV head of one sequence and one split of its keys (flash decoding: the splits
//   fill the GPU when batch x kv_heads alone would not). Its query rows (position-major: row r is
//   position r / group of query head kvh * group + r % group) form the M side of the matrix-unit
//   tiles, 16 (MT = 1) or 32 (MT = 2) rows, so K and V are read once for all the heads that share
//   them. Each of the 4 warps takes its own steps of 16 keys (step w, w + 4, ...), staged by the
//   warp itself in a ring of shared memory (cp.async, `stages` deep: a launch argument; no
//   block-wide barrier), and keeps its own online softmax (running max and sum, FP32) and output:
//   S = Q.K^T and O += P.V on mma.sync m16n8k16, P staying in registers. At the end the four warps' states are merged in
//   shared memory into O, or with more than one split into FP32 partials; the last block of a KV
//   head to finish (an arrival counter per KV head) merges every split's partials into O
//   (decode_merge.hpp).
//   Paged K/V in pages of a multiple of 16 positions: a step of 16 keys lies in one page, so each
//   step reads one block-table entry (the warp's lanes the same one), read a step ahead.
// Included by decode_sm80_f16.hip and decode_sm80_bf16.hip, one element type each.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "attention/decode_merge.hpp"
#include "attention/decode_ring.hpp"
#include "attention/gpu.hpp"
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace attention {
namespace decode_detail {

using namespace gpu;

template <int D, int MT>
struct DecodeCfg {
  static constexpr int kStride = D + 8;  // Q's rows in shared memory (padded: ldmatrix's 8 rows in 8 bank groups)
  // Steps of 16 keys a warp's ring holds (stages - 1 in flight while it computes one): a runtime
  // choice (Launch::decode_stages, 0: this default), from 2 to kDecodeMaxStages.
  // Each warp's ring of 16-key steps: 5 deep at head dim 64 (faster than 4 at 5 of 7 points of the
  // H100 decode sweep, e.g. B16 H8/1 S2048 14.8 against 16.3 us, B4 H64/8 S16384 57.2 against 60.6;
  // 1.4 % slower at B16 H32/8 S4096), 3 up to 128, 2 at 256; at head dim 80, 4 where a KV head has
  // up to kDecodeShortKeys keys. At 4 a D80 block takes 90 KB instead of 68 (two blocks an
  // SM instead of three, so fewer splits at half a wave): H100 grid of ring depths and waves,
  // 2026-11-27, us, 3 -> 4 deep at half a wave: B1 H32/8 S8192 21.6 -> 20.1, B16 H8/1 S2048 18.3 ->
  // 16.9, B16 H32/8 S4096 76.1 -> 75.6, B1 H64/64 S128 7.0 -> 6.9, B8 H32/32 S1024 35.6 -> 36.6; over
  // 16384 keys slower (B4 H64/8 78.0 -> 81.4; B1 H8/8, 27.3 -> 25.9, kept at 3 with it); beyond
  // 8192 keys 2 since the H200 grid of 2026-11-28 (gpu.hpp).
  // (The numbers live in attention/gpu.hpp: decode_default_ring; where nothing is split the host
  // may ask for a shallower ring: decode_unsplit_ring.) The deeper of the two defaults:
  static constexpr int kStagesMost = std::max(decode_ring_long(D), decode_ring_short(D));
  static constexpr int kCpr = D / 8;       // 16-byte chunks a row
  static constexpr int kChunk = kKeys * D;  // K or V of one step: unpadded rows, permuted chunks (decode_ring.hpp)
  // Element offset of row r's 16-byte chunk c in a step's K or V.
  __host__ __device__ static constexpr int at(int r, int c) { return decode_ring_at<D>(r, c); }
  static constexpr int kQBytes = 16 * MT * kStride * 2;
  static constexpr int kMergeBytes = kWarps * 16 * MT * D * 4;   // each warp's output, FP32
  static constexpr int kStatBytes = (2 * kWarps + 2) * 16 * MT * 4 + 16;  // + the last-block flag
  // The last block's merge reuses the ring: rows x splits weights, then (rows x D x parts) sums.
  static constexpr int kMergeNeedBytes = 4 * (kDecodeMaxMerge + (kDecodeMaxMerge > 4 * 512 ? kDecodeMaxMerge : 4 * 512));
  static_assert(D % 16 == 0, "head_dim: a multiple of 16");
  static_assert(MT * D <= 256, "the output accumulators: MT * D / 2 per thread");
  __host__ __device__ static constexpr int ring_bytes(int stages) { return kWarps * stages * 2 * kChunk * 2; }
  // The ring, or the warps' outputs and the last block's merge where those are larger.
  __host__ __device__ static constexpr int big_bytes(int stages) {
    return ring_bytes(stages) > kMergeBytes ? (ring_bytes(stages) > kMergeNeedBytes ? ring_bytes(stages) : kMergeNeedBytes)
                                            : (kMergeBytes > kMergeNeedBytes ? kMergeBytes : kMergeNeedBytes);
  }
  __host__ __device__ static constexpr int bytes(int stages) { return big_bytes(stages) + kQBytes + kStatBytes; }
};
constexpr int kDecodeMaxStages = kDecodeStagesMax;

// cp.async.wait_group with a count known at run time (the same in every lane of a warp).
__device__ __forceinline__ void cp_async_wait_n(int n) {
  switch (n) {
    case 0: cp_async_wait<0>(); break;
    case 1: cp_async_wait<1>(); break;
    case 2: cp_async_wait<2>(); break;
    case 3: cp_async_wait<3>(); break;
    case 4: cp_async_wait<4>(); break;
    case 5: cp_async_wait<5>(); break;
    case 6: cp_async_wait<6>(); break;
    case 7: cp_async_wait<7>(); break;
    default: cp_async_wait<kDecodeMaxStages - 1>(); break;  // n >= 7 (the host keeps stages <= 8)
  }
}

__device__ __forceinline__ float dec_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// grid: x = b * kv_heads + kv head, y = key split. STEPS (paged): pages of a multiple of 16 keys, read a page
// a step; else a table entry a key row.
template <class T, int D, int MT, bool PAGED, bool STEPS>
__global__ void __launch_bounds__(kThreads)
    bwprof_attention_decode(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ Vm,
                            T* __restrict__ O, float* __restrict__ ws_o, float* __restrict__ ws_ml,
                            int* __restrict__ arrivals, KvLayout kv, int heads, int seq_q, int group, int split_len,
                            float scale_log2, bool causal, int stages) {
  using C = DecodeCfg<D, MT>;
  static_assert(C::kMergeNeedBytes >= 4 * (2 * kDecodeMergeWeights) &&
                    C::kMergeNeedBytes >= 4 * (kDecodeMergeWeights + 4 * kDecodeMergeItems),
                "the merge's shared memory");
  constexpr int ST = C::kStride, KT = D / 16, DT = D / 8, RM = 16 * MT;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  T* ring = reinterpret_cast<T*>(smem_raw) + warp * stages * 2 * C::kChunk;
  float* merge = reinterpret_cast<float*>(smem_raw);  // after the keys: [warp][row][D]
  const int big = C::big_bytes(stages);
  T* sq = reinterpret_cast<T*>(smem_raw + big);
  float* st_m = reinterpret_cast<float*>(smem_raw + big + C::kQBytes);  // [warp][row], then the rows' totals
  float* st_l = st_m + kWarps * RM;
  float* row_m = st_l + kWarps * RM;
  float* row_l = row_m + RM;
  const int R = seq_q * group;  // rows of this KV head (<= RM)
  const int b = blockIdx.x / kv.kv_heads, kvh = blockIdx.x % kv.kv_heads;
  const int split = blockIdx.y, splits = gridDim.y;
  const int shift = kv.seq_kv - seq_q;
  const int k_visible = causal ? min(kv.seq_kv, (R - 1) / group + shift + 1) : kv.seq_kv;
  const int k_begin = split * split_len, k_end = min(k_visible, k_begin + split_len);
  const int steps = k_end > k_begin ? (k_end - k_begin + kKeys - 1) / kKeys : 0;
  const int mine = steps > warp ? (steps - warp + kWarps - 1) / kWarps : 0;  // steps w, w + 4, ...

  for (int c = tid; c < RM * D / 8; c += kThreads) {  // Q, zeros past the rows
    const int r = c / (D / 8), x = (c % (D / 8)) * 8;
    const bool in = r < R;
    const int hq = kvh * group + (in ? r % group : 0), i = in ? r / group : 0;
    cp_async16(sq + r * ST + x, Q + ((static_cast<std::size_t>(b) * heads + hq) * seq_q + i) * D + x, in);
  }
  cp_async_commit();
  // Paged in whole pages per step: a cursor on the warp's next step to look up (its page of the sequence and
  // its row there), moved on by the warp's 4 x 16 keys a step without a division; page_of(n, row) gives step
  // n's block-table entry (0 past the warp's last step) and row, for n = 0, 1, ... in turn.
  constexpr bool page_steps = PAGED && STEPS;
  int cur_pg = 0, cur_row = 0, adv_pg = 0, adv_row = 0;
  if (page_steps) {
    const int k = k_begin + warp * kKeys;
    cur_pg = k / kv.block_size, cur_row = k % kv.block_size;
    adv_pg = kWarps * kKeys / kv.block_size, adv_row = kWarps * kKeys % kv.block_size;
  }
  auto page_of = [&](int n, int& row) {
    row = cur_row;
    const int e = page_steps && n < mine ? kv.table[b * kv.blocks_per_seq + cur_pg] : 0;
    cur_pg += adv_pg, cur_row += adv_row;
    if (cur_row >= kv.block_size) cur_row -= kv.block_size, ++cur_pg;
    return e;
  };
  // A whole step of contiguous or page-step K/V is 16 rows in a row of memory: chunk c = lane + 32 u sits
  // at 16 c bytes there, so a warp's copy takes 512 bytes in a row (four whole 128-byte lines; a copy of
  // 16 rows x 32 bytes each was 3-48 % slower, H200) and the lane's copies differ by constants in global memory.
  // In the ring (permuted rows, DecodeCfg::at) chunk c's place repeats with a period of kPer copies:
  // the lane keeps kPer offsets and adds constants. A partial step, or rows a table entry each, copy chunk by chunk.
  constexpr int kCpr = C::kCpr, kPer = decode_copy_period(kCpr);
  constexpr int kRowsPer = 32 * kPer / kCpr;  // rows a period of copies covers
  int ring_off[kPer];
#pragma unroll
  for (int p = 0; p < kPer; ++p)
    ring_off[p] = C::at((lane + 32 * p) / kCpr, (lane + 32 * p) % kCpr);
  auto load = [&](int slot, int n, int page, int row) {  // this warp's n-th step into ring slot `slot`
    T* dk = ring + slot * 2 * C::kChunk;
    T* dv = dk + C::kChunk;
    const int k0 = k_begin + (warp + n * kWarps) * kKeys;
    if ((!PAGED || page_steps) && k0 + kKeys <= k_end) {
      const std::size_t base = page_steps ? ((static_cast<std::size_t>(page) * kv.kv_heads + kvh) * kv.block_size + row) * D
                                          : kv.offset<false, D>(b, kvh, k0);
      const T* sk = K + base + lane * 8;
      const T* sv = Vm + base + lane * 8;
#pragma unroll
      for (int u = 0; u < kKeys * D / 8 / 32; ++u) {
        const int at = ring_off[u % kPer] + (u / kPer) * kRowsPer * D;
        cp_async16(dk + at, sk + u * 256, true);
        cp_async16(dv + at, sv + u * 256, true);
      }
      return;
    }
    const std::size_t page_base =
        page_steps ? ((static_cast<std::size_t>(page) * kv.kv_heads + kvh) * kv.block_size + row) * D : 0;
#pragma unroll
    for (int u = 0; u < kKeys * D / 8 / 32; ++u) {
      const int c = lane + 32 * u;
      const int r = c / (D / 8), x = (c % (D / 8)) * 8;
      const int j = k0 + r;
      const bool in = j < k_end;
      std::size_t off = 0;
      if (in) off = page_steps ? page_base + static_cast<std::size_t>(r) * D + x : kv.offset<PAGED, D>(b, kvh, j) + x;
      cp_async16(dk + C::at(r, x / 8), K + off, in);
      cp_async16(dv + C::at(r, x / 8), Vm + off, in);
    }
  };
  int row_next = 0;
  for (int s = 0; s < stages - 1; ++s) {
    if (s < mine) {
      const int e = page_of(s, row_next);
      load(s, s, e, row_next);
    }
    cp_async_commit();
  }
  int page_next = page_of(stages - 1, row_next);
  cp_async_wait_n(stages - 1);  // Q (the oldest group)
  __syncthreads();

  float o[MT][DT][4], m[MT][2], l[MT][2];
  int qi[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int d = 0; d < DT; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) m[mt][rr] = -INFINITY, l[mt][rr] = 0.f, qi[mt][rr] = (mt * 16 + rr * 8 + g) / group;
  }
  // Q's fragments, kept in registers where they are few (MT x KT x 4 at most 16: head dim 64 and
  // below, 16 rows), else read from shared memory at every step. The warps issue an instruction
  // every 4 cycles or so, one a scheduler (ncu, H200: 26 % issue-active, no memory wait at fp16 B4
  // H64/8 S16384 D64), so each instruction a step counts: 45.7 -> 42.4 us there, bf16 B16 H32/8 S4096
  // 41.9 -> 38.4 (H200, 2026-11-28; at head dims 80-128 no gain, and more registers).
  const T* qwarp = sq + (lane % 16) * ST + (lane / 16) * 8;
  constexpr bool kQRegs = MT * KT <= 4;
  unsigned qa[kQRegs ? MT : 1][kQRegs ? KT : 1][4];
  if constexpr (kQRegs) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < KT; ++kk) ldmatrix_x4(qa[mt][kk], qwarp + mt * 16 * ST + kk * 16);
  }
  int slot_rd = 0, slot_wr = stages - 1;  // the ring slots of step n and of step n + stages - 1
  for (int n = 0; n < mine; ++n) {
    cp_async_wait_n(stages - 2);
    __syncwarp();
    if (n + stages - 1 < mine) load(slot_wr, n + stages - 1, page_next, row_next);
    cp_async_commit();
    if (PAGED) page_next = page_of(n + stages, row_next);  // used a step later: its latency hides behind this one
    slot_wr = slot_wr + 1 == stages ? 0 : slot_wr + 1;
    const T* tk = ring + slot_rd * 2 * C::kChunk;
    slot_rd = slot_rd + 1 == stages ? 0 : slot_rd + 1;
    const T* tv = tk + C::kChunk;
    float s[MT][2][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) s[mt][0][0] = s[mt][0][1] = s[mt][0][2] = s[mt][0][3] = s[mt][1][0] =
        s[mt][1][1] = s[mt][1][2] = s[mt][1][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KT; ++kk) {
      unsigned r[4];
      ldmatrix_x4(r, tk + C::at((lane % 8) + (lane / 16) * 8, kk * 2 + (lane / 8) % 2));
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        unsigned a[4];
        if constexpr (kQRegs) {
          a[0] = qa[mt][kk][0], a[1] = qa[mt][kk][1], a[2] = qa[mt][kk][2], a[3] = qa[mt][kk][3];
        } else {
          ldmatrix_x4(a, qwarp + mt * 16 * ST + kk * 16);
        }
        mma_16816_t<T>(s[mt][0], a, b0);
        mma_16816_t<T>(s[mt][1], a, b1);
      }
    }
    const int k0 = k_begin + (warp + n * kWarps) * kKeys;
    if (k0 + kKeys > k_end || (causal && k0 + kKeys - 1 > shift)) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int x = 0; x < 2; ++x)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int j = k0 + x * 8 + 2 * tq + (e & 1);
            if (j >= k_end || (causal && j > qi[mt][e >> 1] + shift)) s[mt][x][e] = -INFINITY;
          }
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float c[2];
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        float mx = fmaxf(m[mt][rr], fmaxf(fmaxf(s[mt][0][2 * rr], s[mt][0][2 * rr + 1]),
                                          fmaxf(s[mt][1][2 * rr], s[mt][1][2 * rr + 1])));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float use = mx == -INFINITY ? 0.f : mx * scale_log2;
        c[rr] = m[mt][rr] == -INFINITY ? 0.f : dec_exp2(m[mt][rr] * scale_log2 - use);
        m[mt][rr] = mx;
        float sum = 0.f;
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          s[mt][x][2 * rr] = dec_exp2(fmaf(s[mt][x][2 * rr], scale_log2, -use));
          s[mt][x][2 * rr + 1] = dec_exp2(fmaf(s[mt][x][2 * rr + 1], scale_log2, -use));
          sum += s[mt][x][2 * rr] + s[mt][x][2 * rr + 1];
        }
        l[mt][rr] = l[mt][rr] * c[rr] + sum;
      }
#pragma unroll
      for (int d = 0; d < DT; ++d) o[mt][d][0] *= c[0], o[mt][d][1] *= c[0], o[mt][d][2] *= c[1], o[mt][d][3] *= c[1];
      const unsigned pa[4] = {pack2<T>(s[mt][0][0], s[mt][0][1]), pack2<T>(s[mt][0][2], s[mt][0][3]),
                              pack2<T>(s[mt][1][0], s[mt][1][1]), pack2<T>(s[mt][1][2], s[mt][1][3])};
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        unsigned r[4];
        ldmatrix_x4_trans(r, tv + C::at((lane % 8) + ((lane / 8) % 2) * 8, dp * 2 + lane / 16));
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        mma_16816_t<T>(o[mt][2 * dp], pa, b0);
        mma_16816_t<T>(o[mt][2 * dp + 1], pa, b1);
      }
    }
    __syncwarp();  // every lane is done with this slot before a later step's load overwrites it
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: it becomes the merge buffer

  // Merge the warps: each warp's (max, sum) per row, the rows' common max, each warp's output
  // scaled to it, then the sum over the warps.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[mt][rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      if (tq == 0) {
        const int row = mt * 16 + rr * 8 + g;
        st_m[warp * RM + row] = m[mt][rr] == -INFINITY ? -INFINITY : m[mt][rr] * scale_log2;
        st_l[warp * RM + row] = lt;
      }
    }
  __syncthreads();
  if (tid < RM) {
    float mx = -INFINITY;
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, st_m[w * RM + tid]);
    float sum = 0.f;
    for (int w = 0; w < kWarps; ++w)
      sum += st_m[w * RM + tid] == -INFINITY ? 0.f : st_l[w * RM + tid] * exp2f(st_m[w * RM + tid] - mx);
    row_m[tid] = mx;
    row_l[tid] = sum;
  }
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int row = mt * 16 + rr * 8 + g;
      const float mw = st_m[warp * RM + row];
      const float f = mw == -INFINITY ? 0.f : exp2f(mw - row_m[row]);
      float* dst = merge + (warp * RM + row) * D + 2 * tq;
#pragma unroll
      for (int d = 0; d < DT; ++d)
        *reinterpret_cast<float2*>(dst + d * 8) = make_float2(o[mt][d][2 * rr] * f, o[mt][d][2 * rr + 1] * f);
    }
  __syncthreads();
  for (int c = tid; c < R * (D / 2); c += kThreads) {
    const int row = c / (D / 2), col = (c % (D / 2)) * 2;
    float2 v = make_float2(0.f, 0.f);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float2 x = *reinterpret_cast<const float2*>(merge + (w * RM + row) * D + col);
      v.x += x.x, v.y += x.y;
    }
    const int i = row / group, hq = kvh * group + row % group;
    const std::size_t orow = (static_cast<std::size_t>(b) * heads + hq) * seq_q + i;
    if (splits == 1) {
      const float inv = row_l[row] > 0.f ? 1.f / row_l[row] : 0.f;
      *reinterpret_cast<unsigned*>(O + orow * D + col) = pack2<T>(v.x * inv, v.y * inv);
    } else {  // this split's unnormalized sums and its (max, sum) in rows.hip's combine layout
      const std::size_t slot = orow * splits + split;
      *reinterpret_cast<float2*>(ws_o + slot * D + col) = v;
      if (col == 0) {
        ws_ml[slot * 2] = row_m[row];
        ws_ml[slot * 2 + 1] = row_l[row];
      }
    }
  }
  if (splits == 1) return;
  // The last split of this KV head to arrive merges them all.
  int* flag = reinterpret_cast<int*>(row_l + RM);
  __threadfence();
  __syncthreads();
  if (tid == 0) *flag = atomicAdd(arrivals + blockIdx.x, 1) == splits - 1;
  __syncthreads();
  if (!*flag) return;
  __threadfence();
  if (tid == 0) arrivals[blockIdx.x] = 0;  // every split has arrived: ready for the next launch
  merge_splits<T, D>(merge, O, ws_o, ws_ml, R, b, kvh, heads, seq_q, group, splits);
}

template <class T, int D, int MT, bool PAGED, bool STEPS>
Resources launch_decode(const Launch& l, bool launch) {
  using C = DecodeCfg<D, MT>;
  auto* fn = &bwprof_attention_decode<T, D, MT, PAGED, STEPS>;
  const int stages = l.decode_stages > 0 ? l.decode_stages : decode_default_ring(D, l.kv.seq_kv);
  const int bytes = C::bytes(stages);
  if (!launch) {
    int dev = 0, most = 0;
    BWPROF_GPU_CHECK(hipGetDevice(&dev));
    BWPROF_GPU_CHECK(hipDeviceGetAttribute(&most, hipDeviceAttributeSharedMemPerBlockOptin, dev));
    if (bytes > most)
      BWPROF_INVALID("head_dim: the decode kernel's ring of " + std::to_string(stages) + " steps needs " +
                     std::to_string(bytes) + " bytes of shared memory a block, this GPU has " + std::to_string(most));
    // The limit never below what either default ring needs: instances of one kernel differ by their
    // keys' count and rings, and one's limit holds for all of them until another sets it.
    const int limit = std::max(bytes, C::bytes(C::kStagesMost));
    BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, limit));
    return kernel_resources(fn, kThreads, bytes);
  }
  if (stages > C::kStagesMost)  // another instance of this kernel may have set a smaller ring's limit since
    BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const dim3 grid(static_cast<unsigned>(l.B * l.Hkv), static_cast<unsigned>(l.splits));
  fn<<<grid, kThreads, bytes, l.stream>>>(static_cast<const T*>(l.Q), static_cast<const T*>(l.K),
                                          static_cast<const T*>(l.V), static_cast<T*>(l.O), l.ws_o, l.ws_ml,
                                          l.arrivals, l.kv, int(l.H), int(l.Sq), l.group, l.split_len,
                                          l.scale_log2, l.causal, stages);
  BWPROF_CHECK_LAUNCH("bwprof_attention_decode");
  return {};
}

template <class T, int D, int MT>
Resources by_paged(const Launch& l, bool launch) {
  // The two paged loads are kernels of their own: with both behind a run-time test in one kernel, the
  // steps' loop held the rows' path (its divisions and table reads) beside the pages' path.
  if (!l.paged) return launch_decode<T, D, MT, false, false>(l, launch);
  return l.kv.block_size % kKeys == 0 ? launch_decode<T, D, MT, true, true>(l, launch)
                                      : launch_decode<T, D, MT, true, false>(l, launch);
}

// MT = 2 (32 rows) where its accumulators fit (head dims up to 128), else 1.
template <class T, int D>
Resources by_rows(const Launch& l, bool launch) {
  if constexpr (D <= 128) {
    if (l.Sq * l.group > 16) return by_paged<T, D, 2>(l, launch);
  }
  return by_paged<T, D, 1>(l, launch);
}

template <class T>
Resources by_dim(const Launch& l, bool launch) {
  switch (l.D) {
    case 32: return by_rows<T, 32>(l, launch);
    case 64: return by_rows<T, 64>(l, launch);
    case 80: return by_rows<T, 80>(l, launch);
    case 96: return by_rows<T, 96>(l, launch);
    case 128: return by_rows<T, 128>(l, launch);
    default: return by_rows<T, 256>(l, launch);
  }
}

}  // namespace decode_detail
}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
