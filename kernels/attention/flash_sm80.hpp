// Attention's matrix-unit kernel on NVIDIA (FP16 or BF16, sm_80+), prefill and decode alike. The M
// side of its tiles is the (query position, query head) pairs that share one KV head, taken
// position-major: row r of KV head h is query position r / group of query head h * group +
// r % group. So each K/V tile is read once for all the query heads that use it (grouped-query
// attention), and a decode step (one position) of 8 grouped heads fills 8 rows of one tile.
// A block of 4 warps takes 64 (or 128) rows; tiles of 64 (or 32) keys of K and V are staged in
// shared memory (cp.async, double-buffered); Q.K^T and P.V run on the matrix units (mma.sync
// m16n8k16), P staying in registers between the two products, with an online softmax (running max
// and sum, FP32). The keys may be split over several blocks (flash decoding: grid.y), whose partial
// results rows.hip's combine kernel merges. Causal: the heaviest row tiles start first and the
// tiles past a block's last visible key are skipped. Head dims 32-256 in multiples of 16 (80 and
// 96 need no padding: their 5 and 6 k-steps of 16 are whole); 256 takes 64 x 32 tiles with Q in
// shared memory so that its 128 accumulators per thread fit the registers.
// Included by flash_sm80_f16.hip and flash_sm80_bf16.hip, one element type each (they compile in
// parallel).
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cmath>
#include <cstddef>

#include "attention/gpu.hpp"
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace attention {
namespace flash_detail {

using namespace gpu;

constexpr int kFlashThreads = 128;  // 4 warps

// MT: 16-row tiles per warp (a block takes 64 * MT rows); BC: keys per K/V tile. With MT = 1 and
// BC >= 64 the warp keeps its Q fragments in registers and Q passes through the second V stage;
// otherwise Q stays in shared memory and is re-read per tile (MT = 2: each K/V fragment read
// from shared memory feeds two row tiles).
template <int D, int MT, int BC>
struct FlashCfg {
  static constexpr int kBr = 64 * MT;
  static constexpr int kStride = D + 8;  // elements: ldmatrix's 8 rows fall in 8 different bank groups
  static constexpr int kTile = BC * kStride;
  static constexpr bool kQInRegs = MT == 1 && kBr <= BC;
  static constexpr int kBytes = (4 * kTile + (kQInRegs ? 0 : kBr * kStride)) * 2;
  static constexpr int kMinBlocks = D > 128 ? 2 : MT == 1 ? 3 : 2;
  static_assert(D % 16 == 0, "head_dim: a multiple of 16");
};

// 2^x on the special-function unit (the softmax's inputs are <= 0 and never denormal-sensitive).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// grid: x = row tile (the last first: the heaviest under a causal mask) * (batch * kv_heads) +
// sequence and KV head; y = key split.
template <class T, int D, int MT, int BC, bool PAGED>
__global__ void __launch_bounds__(kFlashThreads, FlashCfg<D, MT, BC>::kMinBlocks)
    bwprof_attention_flash(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ Vm,
                           T* __restrict__ O, float* __restrict__ ws_o, float* __restrict__ ws_ml, KvLayout kv,
                           int heads, int seq_q, int group, int split_len, float scale_log2, bool causal) {
  using C = FlashCfg<D, MT, BC>;
  constexpr int ST = C::kStride, KT = D / 16, DT = D / 8, NT = BC / 8, BR = C::kBr;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sk = reinterpret_cast<T*>(smem_raw);
  T* sv = sk + 2 * C::kTile;
  T* sq = C::kQInRegs ? sv + C::kTile : sv + 2 * C::kTile;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, tq = lane % 4;
  const int R = seq_q * group;  // rows of this KV head
  const int nrt = (R + BR - 1) / BR;
  const int bh_count = gridDim.x / nrt;
  const int bh = blockIdx.x % bh_count;
  const int q0 = (nrt - 1 - static_cast<int>(blockIdx.x / bh_count)) * BR;
  const int b = bh / kv.kv_heads, kvh = bh % kv.kv_heads;
  const int split = blockIdx.y, splits = gridDim.y;
  const int shift = kv.seq_kv - seq_q;  // query i sees keys <= i + shift under the causal mask
  const int i_first = q0 / group, i_last = (min(q0 + BR, R) - 1) / group;
  const int k_visible = causal ? min(kv.seq_kv, i_last + shift + 1) : kv.seq_kv;
  const int k_begin = split * split_len;
  const int k_end = min(k_visible, k_begin + split_len);
  const int ntiles = k_end > k_begin ? (k_end - k_begin + BC - 1) / BC : 0;
  const bool active = q0 + warp * 16 * MT < R;  // a warp whose rows all lie past R only loads

  for (int c = tid; c < BR * D / 8; c += kFlashThreads) {
    const int r = c / (D / 8), x = (c % (D / 8)) * 8;
    const int row = q0 + r;
    const bool in = row < R;
    const int i = in ? row / group : 0, hq = kvh * group + (in ? row % group : 0);
    cp_async16(sq + r * ST + x, Q + ((static_cast<std::size_t>(b) * heads + hq) * seq_q + i) * D + x, in);
  }
  auto load_kv = [&](int stage, int t) {
    T* dk = sk + stage * C::kTile;
    T* dv = sv + stage * C::kTile;
    for (int c = tid; c < BC * D / 8; c += kFlashThreads) {
      const int r = c / (D / 8), x = (c % (D / 8)) * 8;
      const int j = k_begin + t * BC + r;
      const bool in = j < k_end;
      const std::size_t off = in ? kv.offset<PAGED, D>(b, kvh, j) + x : 0;
      cp_async16(dk + r * ST + x, K + off, in);
      cp_async16(dv + r * ST + x, Vm + off, in);
    }
  };
  if (ntiles > 0) load_kv(0, 0);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  const T* qwarp = sq + (warp * 16 * MT + (lane % 16)) * ST + (lane / 16) * 8;
  unsigned qf[C::kQInRegs ? KT : 1][4];
  if (C::kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < KT; ++kk) ldmatrix_x4(qf[C::kQInRegs ? kk : 0], qwarp + kk * 16);
    __syncthreads();  // every warp holds its Q before tile 1 overwrites it
  }

  float o[MT][DT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < DT; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
  float m[MT][2], l[MT][2];
  int qi[MT][2];  // this thread's rows' query positions (for the causal mask)
  const int row0 = q0 + warp * 16 * MT + g;  // this thread's rows: row0 + 16 mt + 8 rr
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      m[mt][rr] = -INFINITY, l[mt][rr] = 0.f;
      qi[mt][rr] = (row0 + mt * 16 + rr * 8) / group;
    }

  for (int t = 0; t < ntiles; ++t) {
    if (t + 1 < ntiles) {
      load_kv((t + 1) % 2, t + 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (active) {
      const T* tk = sk + (t % 2) * C::kTile;
      const T* tv = sv + (t % 2) * C::kTile;
      float s[MT][NT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NT; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KT; ++kk) {
        unsigned a[MT][4];
        if (C::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[0][e] = qf[C::kQInRegs ? kk : 0][e];
        } else {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) ldmatrix_x4(a[mt], qwarp + mt * 16 * ST + kk * 16);
        }
#pragma unroll
        for (int jp = 0; jp < NT / 2; ++jp) {
          unsigned r[4];
          ldmatrix_x4(r, tk + (jp * 16 + (lane % 8) + (lane / 16) * 8) * ST + kk * 16 + ((lane / 8) % 2) * 8);
          const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_16816_t<T>(s[mt][2 * jp], a[mt], b0);
            mma_16816_t<T>(s[mt][2 * jp + 1], a[mt], b1);
          }
        }
      }
      // Mask keys past this block's range and, under the causal mask, after each row's position.
      const int kt0 = k_begin + t * BC;
      const bool edge = kt0 + BC > k_end || (causal && kt0 + BC - 1 > i_first + shift);
      if (edge) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int n = 0; n < NT; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int j = kt0 + n * 8 + 2 * tq + (e & 1);
              if (j >= k_end || (causal && j > qi[mt][e >> 1] + shift)) s[mt][n][e] = -INFINITY;
            }
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        float c[2];
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          float mx = m[mt][rr];
#pragma unroll
          for (int n = 0; n < NT; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * rr], s[mt][n][2 * rr + 1]));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          // Scores stay unscaled: 2^(s * scale - max * scale) is one fused multiply-add per score.
          const float use = mx == -INFINITY ? 0.f : mx * scale_log2;  // no visible key yet: stays empty
          c[rr] = m[mt][rr] == -INFINITY ? 0.f : fast_exp2(m[mt][rr] * scale_log2 - use);
          m[mt][rr] = mx;
          float sum = 0.f;
#pragma unroll
          for (int n = 0; n < NT; ++n) {
            s[mt][n][2 * rr] = fast_exp2(fmaf(s[mt][n][2 * rr], scale_log2, -use));
            s[mt][n][2 * rr + 1] = fast_exp2(fmaf(s[mt][n][2 * rr + 1], scale_log2, -use));
            sum += s[mt][n][2 * rr] + s[mt][n][2 * rr + 1];
          }
          l[mt][rr] = l[mt][rr] * c[rr] + sum;  // this thread's share; the quad is summed at the end
        }
#pragma unroll
        for (int d = 0; d < DT; ++d)
          o[mt][d][0] *= c[0], o[mt][d][1] *= c[0], o[mt][d][2] *= c[1], o[mt][d][3] *= c[1];
      }
#pragma unroll
      for (int kc = 0; kc < BC / 16; ++kc) {
        // The accumulators of two 8-key tiles are, as 16-bit pairs, the A operand of a 16-key step.
        unsigned pa[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          pa[mt][0] = pack2<T>(s[mt][2 * kc][0], s[mt][2 * kc][1]);
          pa[mt][1] = pack2<T>(s[mt][2 * kc][2], s[mt][2 * kc][3]);
          pa[mt][2] = pack2<T>(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
          pa[mt][3] = pack2<T>(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < DT / 2; ++dp) {
          unsigned r[4];
          ldmatrix_x4_trans(r, tv + (kc * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * ST + dp * 16 + (lane / 16) * 8);
          const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_16816_t<T>(o[mt][2 * dp], pa[mt], b0);
            mma_16816_t<T>(o[mt][2 * dp + 1], pa[mt], b1);
          }
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before the next load overwrites it
  }
  if (!active) return;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[mt][rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      const int row = row0 + mt * 16 + rr * 8;
      if (row >= R) continue;
      const int i = row / group, hq = kvh * group + row % group;
      const std::size_t orow = (static_cast<std::size_t>(b) * heads + hq) * seq_q + i;
      if (splits == 1) {
        const float inv = lt > 0.f ? 1.f / lt : 0.f;
        T* out = O + orow * D;
#pragma unroll
        for (int d = 0; d < DT; ++d)
          *reinterpret_cast<unsigned*>(out + d * 8 + 2 * tq) = pack2<T>(o[mt][d][2 * rr] * inv, o[mt][d][2 * rr + 1] * inv);
      } else {  // this split's unnormalized sums and its (max, sum) in rows.hip's combine layout
        const std::size_t slot = orow * splits + split;
        float* out = ws_o + slot * D;
#pragma unroll
        for (int d = 0; d < DT; ++d)
          *reinterpret_cast<float2*>(out + d * 8 + 2 * tq) = make_float2(o[mt][d][2 * rr], o[mt][d][2 * rr + 1]);
        if (tq == 0) {
          ws_ml[slot * 2] = m[mt][rr] == -INFINITY ? -INFINITY : m[mt][rr] * scale_log2;
          ws_ml[slot * 2 + 1] = lt;
        }
      }
    }
  }
}

template <class T, int D, int MT, int BC, bool PAGED>
Resources launch_flash(const Launch& l, bool launch) {
  using C = FlashCfg<D, MT, BC>;
  auto* fn = &bwprof_attention_flash<T, D, MT, BC, PAGED>;
  if (!launch) {
    BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, C::kBytes));
    return kernel_resources(fn, kFlashThreads, C::kBytes);
  }
  const dim3 grid(static_cast<unsigned>(flash_row_tiles(l, C::kBr) * l.B * l.Hkv), static_cast<unsigned>(l.splits));
  fn<<<grid, kFlashThreads, C::kBytes, l.stream>>>(static_cast<const T*>(l.Q), static_cast<const T*>(l.K),
                                                   static_cast<const T*>(l.V), static_cast<T*>(l.O), l.ws_o, l.ws_ml,
                                                   l.kv, int(l.H), int(l.Sq), l.group, l.split_len, l.scale_log2,
                                                   l.causal);
  BWPROF_CHECK_LAUNCH("bwprof_attention_flash");
  if (l.splits > 1) combine(l, launch);
  return {};
}

template <class T, int D, int MT, int BC>
Resources by_paged(const Launch& l, bool launch) {
  return l.paged ? launch_flash<T, D, MT, BC, true>(l, launch) : launch_flash<T, D, MT, BC, false>(l, launch);
}

// The tile shapes (flash_tile_rows names their rows): 64 rows x 64 keys (0), 128 x 64 (2); head dim
// 256 takes 64 x 32 whatever is asked.
template <class T, int D>
Resources by_tile(const Launch& l, int tile, bool launch) {
  if constexpr (D > 128) {
    return by_paged<T, D, 1, 32>(l, launch);
  } else {
    return tile == 0 ? by_paged<T, D, 1, 64>(l, launch) : by_paged<T, D, 2, 64>(l, launch);
  }
}

template <class T>
Resources by_dim(const Launch& l, int tile, bool launch) {
  switch (l.D) {
    case 32: return by_tile<T, 32>(l, tile, launch);
    case 64: return by_tile<T, 64>(l, tile, launch);
    case 80: return by_tile<T, 80>(l, tile, launch);
    case 96: return by_tile<T, 96>(l, tile, launch);
    case 128: return by_tile<T, 128>(l, tile, launch);
    default: return by_tile<T, 256>(l, tile, launch);
  }
}

}  // namespace flash_detail
}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
