// Attention's prefill kernel on NVIDIA matrix units (FP16, sm_80+, seq_q >= 16): a block of 4 warps
// takes 64 (or 128) query rows; tiles of 64 (or 32) keys of K and V are staged in shared memory
// (cp.async, double-buffered); Q.K^T and P.V run on the matrix units (mma.sync m16n8k16), P staying
// in registers between the two products, with an online softmax (running max and sum, FP32).
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

namespace {

using namespace gpu;

constexpr int kPrefillThreads = 128;  // 4 warps

// MT: 16-row tiles per warp (a block takes 64 * MT query rows); BC: keys per K/V tile. With MT = 1
// the warp keeps its Q fragments in registers and Q passes through the second V stage (so three
// blocks fit an SM at head dim 128); with MT = 2 each K/V fragment read from shared memory feeds two
// row tiles (half the shared-memory traffic per multiply-add) and Q is re-read from shared memory.
template <int D, int MT, int BC>
struct PrefillCfg {
  static constexpr int kBr = 64 * MT;
  static constexpr int kStride = D + 8;  // halves: ldmatrix's 8 rows fall in 8 different bank groups
  static constexpr int kTile = BC * kStride;
  static constexpr bool kQInRegs = MT == 1 && kBr <= BC;
  static constexpr int kBytes = (4 * kTile + (kQInRegs ? 0 : kBr * kStride)) * 2;
};

// 2^x on the special-function unit (the softmax's inputs are <= 0 and never denormal-sensitive).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ unsigned pack_half2(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}

// grid: x = query tile (the last first, the heaviest under a causal mask), y = head, z = batch.
template <int D, int MT, int BC, bool PAGED>
__global__ void __launch_bounds__(kPrefillThreads, MT == 1 ? 3 : 2)
    bwprof_attention_prefill(const __half* __restrict__ Q, const __half* __restrict__ K,
                             const __half* __restrict__ Vm, __half* __restrict__ O, KvLayout kv, int heads,
                             int seq_q, int group, float scale_log2, bool causal) {
  using C = PrefillCfg<D, MT, BC>;
  constexpr int ST = C::kStride, KT = D / 16, DT = D / 8, NT = BC / 8, BR = C::kBr;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* sk = reinterpret_cast<__half*>(smem_raw);
  __half* sv = sk + 2 * C::kTile;
  __half* sq = C::kQInRegs ? sv + C::kTile : sv + 2 * C::kTile;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, tq = lane % 4;
  const int b = blockIdx.z, h = blockIdx.y, kvh = h / group;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;
  const int shift = kv.seq_kv - seq_q;  // query i sees keys <= i + shift under the causal mask
  const int q_last = min(q0 + BR, seq_q) - 1;
  const int k_stop = causal ? min(kv.seq_kv, q_last + shift + 1) : kv.seq_kv;
  const int ntiles = (k_stop + BC - 1) / BC;
  const __half* qbase = Q + ((static_cast<std::size_t>(b) * heads + h) * seq_q) * D;

  for (int c = tid; c < BR * D / 8; c += kPrefillThreads) {
    const int r = c / (D / 8), x = (c % (D / 8)) * 8;
    const bool in = q0 + r < seq_q;
    cp_async16(sq + r * ST + x, in ? qbase + static_cast<std::size_t>(q0 + r) * D + x : qbase, in);
  }
  auto load_kv = [&](int stage, int t) {
    __half* dk = sk + stage * C::kTile;
    __half* dv = sv + stage * C::kTile;
    for (int c = tid; c < BC * D / 8; c += kPrefillThreads) {
      const int r = c / (D / 8), x = (c % (D / 8)) * 8;
      const int j = t * BC + r;
      const bool in = j < kv.seq_kv;
      const std::size_t off = in ? kv.offset<PAGED, D>(b, kvh, j) + x : 0;
      cp_async16(dk + r * ST + x, K + off, in);
      cp_async16(dv + r * ST + x, Vm + off, in);
    }
  };
  if (ntiles > 0) load_kv(0, 0);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  const __half* qwarp = sq + (warp * 16 * MT + (lane % 16)) * ST + (lane / 16) * 8;
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
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.f;
  const int row0 = q0 + warp * 16 * MT + g;  // this thread's rows: row0 + 16 mt + 8 rr

  for (int t = 0; t < ntiles; ++t) {
    if (t + 1 < ntiles) {
      load_kv((t + 1) % 2, t + 1);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const __half* tk = sk + (t % 2) * C::kTile;
    const __half* tv = sv + (t % 2) * C::kTile;
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
          mma_16816(s[mt][2 * jp], a[mt], b0);
          mma_16816(s[mt][2 * jp + 1], a[mt], b1);
        }
      }
    }
    // Mask keys past the end and, under the causal mask, after each row's position.
    const int kt0 = t * BC;
    const bool edge = kt0 + BC > kv.seq_kv || (causal && kt0 + BC - 1 > q0 + shift);
    if (edge) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NT; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int j = kt0 + n * 8 + 2 * tq + (e & 1);
            const int row = row0 + mt * 16 + (e >> 1) * 8;
            if (j >= kv.seq_kv || (causal && j > row + shift)) s[mt][n][e] = -INFINITY;
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
      for (int d = 0; d < DT; ++d) o[mt][d][0] *= c[0], o[mt][d][1] *= c[0], o[mt][d][2] *= c[1], o[mt][d][3] *= c[1];
    }
#pragma unroll
    for (int kc = 0; kc < BC / 16; ++kc) {
      // The accumulators of two 8-key tiles are, as FP16 pairs, the A operand of a 16-key step.
      unsigned pa[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa[mt][0] = pack_half2(s[mt][2 * kc][0], s[mt][2 * kc][1]);
        pa[mt][1] = pack_half2(s[mt][2 * kc][2], s[mt][2 * kc][3]);
        pa[mt][2] = pack_half2(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
        pa[mt][3] = pack_half2(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        unsigned r[4];
        ldmatrix_x4_trans(r, tv + (kc * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * ST + dp * 16 + (lane / 16) * 8);
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_16816(o[mt][2 * dp], pa[mt], b0);
          mma_16816(o[mt][2 * dp + 1], pa[mt], b1);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before the next load overwrites it
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[mt][rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      const int row = row0 + mt * 16 + rr * 8;
      if (row >= seq_q) continue;
      const float inv = lt > 0.f ? 1.f / lt : 0.f;
      __half* orow = O + ((static_cast<std::size_t>(b) * heads + h) * seq_q + row) * D;
#pragma unroll
      for (int d = 0; d < DT; ++d)
        *reinterpret_cast<__half2*>(orow + d * 8 + 2 * tq) =
            __floats2half2_rn(o[mt][d][2 * rr] * inv, o[mt][d][2 * rr + 1] * inv);
    }
  }
}

template <int D, int MT, int BC, bool PAGED>
Resources launch_prefill(const Launch& l, bool launch) {
  auto* fn = &bwprof_attention_prefill<D, MT, BC, PAGED>;
  constexpr int smem = PrefillCfg<D, MT, BC>::kBytes;
  constexpr int kBr = PrefillCfg<D, MT, BC>::kBr;
  if (!launch) {
    BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, smem));
    return kernel_resources(fn, kPrefillThreads, smem);
  }
  const dim3 grid(static_cast<unsigned>((l.Sq + kBr - 1) / kBr), static_cast<unsigned>(l.H),
                  static_cast<unsigned>(l.B));
  fn<<<grid, kPrefillThreads, smem, l.stream>>>(static_cast<const __half*>(l.Q), static_cast<const __half*>(l.K),
                                                static_cast<const __half*>(l.V), static_cast<__half*>(l.O), l.kv,
                                                int(l.H), int(l.Sq), l.group, l.scale_log2, l.causal);
  BWPROF_CHECK_LAUNCH("bwprof_attention_prefill");
  return {};
}

// The tile shapes: 64 rows x 64 keys (0), 128 x 32 (1) or 128 x 64 (2).
template <int D>
Resources by_tile(const Launch& l, int tile, bool launch) {
  switch (tile) {
    case 0: return l.paged ? launch_prefill<D, 1, 64, true>(l, launch) : launch_prefill<D, 1, 64, false>(l, launch);
    case 1: return l.paged ? launch_prefill<D, 2, 32, true>(l, launch) : launch_prefill<D, 2, 32, false>(l, launch);
    default: return l.paged ? launch_prefill<D, 2, 64, true>(l, launch) : launch_prefill<D, 2, 64, false>(l, launch);
  }
}

}  // namespace

Resources prefill(const Launch& l, int tile, bool launch) {
  switch (l.D) {
    case 32: return by_tile<32>(l, tile, launch);
    case 64: return by_tile<64>(l, tile, launch);
    default: return by_tile<128>(l, tile, launch);
  }
}

}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
