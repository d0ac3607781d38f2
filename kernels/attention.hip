// Flash attention on the GPU: O = softmax(Q.K^T / sqrt(d)).V in one pass over K and V with an online
// softmax (running max and sum, FP32), never forming the score matrix in memory. Two kernels:
//   prefill (FP16, NVIDIA sm_80+, seq_q >= 16): a block of 4 warps takes 64 (or 128) query rows;
//     tiles of 64 (or 32) keys of K and V are staged in shared memory (cp.async, double-buffered);
//     Q.K^T and P.V run on the matrix units (mma.sync m16n8k16), P staying in registers between the
//     two products.
//   rows (FP32, decode, short queries, AMD): one block per query row and group of query heads that
//     share a KV head; the KV length is split over several blocks when there are too few rows to
//     fill the GPU (flash decoding), and a second kernel merges the splits' partial results.
// Both read K/V contiguously [batch, kv_heads, seq_kv, head_dim] or through a paged cache's block
// table ([blocks, kv_heads, block_size, head_dim], the KV-cache append's layout).
#include <cmath>
#include <cstdlib>

#include "bwprof/error.hpp"
#include "cpu/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"
#include "gpu_mma.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr float kLog2e = 1.4426950408889634f;

// Where key/value position `pos` of (sequence b, KV head h) starts.
struct KvLayout {
  const int* table;  // paged: [batch, blocks_per_seq]
  int kv_heads, seq_kv, block_size, blocks_per_seq;
  template <bool PAGED, int D>
  __device__ __forceinline__ std::size_t offset(int b, int h, int pos) const {
    if (!PAGED) return ((static_cast<std::size_t>(b) * kv_heads + h) * seq_kv + pos) * D;
    const int blk = table[b * blocks_per_seq + pos / block_size];
    return ((static_cast<std::size_t>(blk) * kv_heads + h) * block_size + pos % block_size) * D;
  }
};

// exp2(a - b) where a may be -inf (an empty running state) and b is finite or -inf.
__device__ __forceinline__ float exp2_diff(float a, float b) { return a == -INFINITY ? 0.f : exp2f(a - b); }

// ---- rows kernel ----------------------------------------------------------------------------------
constexpr int kRowThreads = 128;
constexpr int kRowWarps = kRowThreads / 32;
constexpr int kRowUnroll = 4;

// grid: x = KV split, y = query row i * (group / G) + head chunk, z = b * kv_heads + kv head.
// A 32-lane group ("warp" here, half a wave on 64-wide AMD wavefronts) holds 32 / LPK keys at once,
// LPK lanes per key, each lane 16 bytes of the key.
template <class T, int D, int G, bool PAGED>
__global__ void __launch_bounds__(kRowThreads)
    bwprof_attention_rows(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ Vm,
                          T* __restrict__ O, float* __restrict__ ws_o, float* __restrict__ ws_ml, KvLayout kv,
                          int heads, int seq_q, int group, int split_len, float scale_log2, bool causal) {
  constexpr int VEC = Elems<T>::kVec;
  constexpr int LPK = D / VEC;
  constexpr int KPW = 32 / LPK;
  static_assert(LPK >= 1 && LPK <= 32 && D % VEC == 0, "head_dim");
  const int chunks = group / G;
  const int i = blockIdx.y / chunks, hc = blockIdx.y % chunks;
  const int b = blockIdx.z / kv.kv_heads, kvh = blockIdx.z % kv.kv_heads;
  const int h0 = kvh * group + hc * G;  // first query head of this block
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int slot = lane / LPK, part = lane % LPK;
  const int visible = causal ? kv.seq_kv - seq_q + i + 1 : kv.seq_kv;
  const int k_begin = blockIdx.x * split_len;
  const int k_end = min(visible, k_begin + split_len);

  float q[G][VEC], o[G][VEC], m[G], l[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const uint4 raw = *reinterpret_cast<const uint4*>(
        Q + ((static_cast<std::size_t>(b) * heads + h0 + g) * seq_q + i) * D + part * VEC);
    unpack<T>(raw, q[g]);
#pragma unroll
    for (int e = 0; e < VEC; ++e) q[g][e] *= scale_log2, o[g][e] = 0.f;
    m[g] = -INFINITY;
    l[g] = 0.f;
  }

  for (int base = k_begin + warp * KPW; base < k_end; base += kRowWarps * KPW * kRowUnroll) {
    uint4 kr[kRowUnroll], vr[kRowUnroll];
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int j = base + u * kRowWarps * KPW + slot;
      kr[u] = vr[u] = make_uint4(0, 0, 0, 0);
      if (j < k_end) {
        const std::size_t off = kv.offset<PAGED, D>(b, kvh, j) + part * VEC;
        kr[u] = *reinterpret_cast<const uint4*>(K + off);
        vr[u] = *reinterpret_cast<const uint4*>(Vm + off);
      }
    }
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int j = base + u * kRowWarps * KPW + slot;
      float kf[VEC], vf[VEC], s[G];
      unpack<T>(kr[u], kf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float acc = 0.f;
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc += q[g][e] * kf[e];
#pragma unroll
        for (int off = LPK / 2; off > 0; off >>= 1) acc += BWPROF_SHFL_XOR(acc, off);
        s[g] = acc;
      }
      if (j < k_end) {
        unpack<T>(vr[u], vf);
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const float mn = fmaxf(m[g], s[g]);
          const float c = exp2_diff(m[g], mn), p = exp2f(s[g] - mn);
          l[g] = l[g] * c + p;
#pragma unroll
          for (int e = 0; e < VEC; ++e) o[g][e] = o[g][e] * c + p * vf[e];
          m[g] = mn;
        }
      }
    }
  }
  // Merge the key slots of a warp, then the warps through shared memory.
#pragma unroll
  for (int off = LPK; off < 32; off <<= 1) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float mo = BWPROF_SHFL_XOR(m[g], off), lo = BWPROF_SHFL_XOR(l[g], off);
      const float mn = fmaxf(m[g], mo);
      const float c1 = exp2_diff(m[g], mn), c2 = exp2_diff(mo, mn);
      l[g] = l[g] * c1 + lo * c2;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const float oo = BWPROF_SHFL_XOR(o[g][e], off);
        o[g][e] = o[g][e] * c1 + oo * c2;
      }
      m[g] = mn;
    }
  }
  __shared__ float sm_m[kRowWarps][G], sm_l[kRowWarps][G], sm_o[kRowWarps][G][D];
  if (slot == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) sm_o[warp][g][part * VEC + e] = o[g][e];
      if (part == 0) sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
    }
  }
  __syncthreads();
  const int splits = gridDim.x;
  for (int idx = tid; idx < G * D; idx += kRowThreads) {
    const int g = idx / D, x = idx % D;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kRowWarps; ++w) mx = fmaxf(mx, sm_m[w][g]);
    float ls = 0.f, os = 0.f;
#pragma unroll
    for (int w = 0; w < kRowWarps; ++w) {
      const float c = exp2_diff(sm_m[w][g], mx);
      ls += sm_l[w][g] * c;
      os += sm_o[w][g][x] * c;
    }
    const std::size_t row = (static_cast<std::size_t>(b) * heads + h0 + g) * seq_q + i;
    if (splits == 1) {
      O[row * D + x] = from_f<T>(os / ls);
    } else {
      ws_o[(row * splits + blockIdx.x) * D + x] = os;
      if (x == 0) ws_ml[(row * splits + blockIdx.x) * 2] = mx, ws_ml[(row * splits + blockIdx.x) * 2 + 1] = ls;
    }
  }
}

// Merges the splits of each row: O = sum_s o_s 2^(m_s - M) / sum_s l_s 2^(m_s - M).
template <class T, int D>
__global__ void __launch_bounds__(D) bwprof_attention_combine(const float* __restrict__ ws_o,
                                                              const float* __restrict__ ws_ml, T* __restrict__ O,
                                                              int splits) {
  const std::size_t row = blockIdx.x;
  const int x = threadIdx.x;
  float mx = -INFINITY;
  for (int s = 0; s < splits; ++s) mx = fmaxf(mx, ws_ml[(row * splits + s) * 2]);
  float ls = 0.f, os = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float c = exp2_diff(ws_ml[(row * splits + s) * 2], mx);
    ls += ws_ml[(row * splits + s) * 2 + 1] * c;
    os += ws_o[(row * splits + s) * D + x] * c;
  }
  O[row * D + x] = from_f<T>(os / ls);
}

// ---- prefill kernel (NVIDIA matrix units) ------------------------------------------------------
#if defined(BWPROF_CUDA)
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
#endif  // BWPROF_CUDA

// ---- the instance ------------------------------------------------------------------------------

class AttentionGpu final : public KernelInstance {
 public:
  AttentionGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), a_(p) {
    if (a_.D != 32 && a_.D != 64 && a_.D != 128)
      BWPROF_INVALID("head_dim: the flash variants support head dims 32, 64 and 128, got " + std::to_string(a_.D) +
                     " (the cpu variant takes any)");
    const std::int64_t lim = 2147483647;
    if (a_.B * a_.H * a_.Sq > lim || a_.Skv > lim) BWPROF_INVALID("seq_q/seq_kv: sizes beyond 2^31-1 on the GPU");
    host_ = make_attention_data(p);
    Q_ = DeviceBuffer::from(host_.Q, "attention Q");
    K_ = DeviceBuffer::from(host_.K, "attention K");
    V_ = DeviceBuffer::from(host_.V, "attention V");
    O_ = DeviceBuffer::from(host_.O, "attention O");
    kv_.kv_heads = static_cast<int>(a_.Hkv);
    kv_.seq_kv = static_cast<int>(a_.Skv);
    kv_.block_size = static_cast<int>(host_.block_size);
    kv_.blocks_per_seq = static_cast<int>(host_.blocks_per_seq);
    kv_.table = nullptr;
    if (host_.paged) {
      table_ = DeviceBuffer(host_.block_table.size() * sizeof(std::int32_t), "attention block table");
      table_.upload(host_.block_table.data(), table_.bytes());
      kv_.table = table_.get<int>();
    }
    scale_log2_ = static_cast<float>(kLog2e / std::sqrt(static_cast<double>(a_.D)));
    group_ = static_cast<int>(a_.H / a_.Hkv);
#if defined(BWPROF_CUDA)
    const int cc = std::atoi(g.info().arch.c_str() + 3);
    prefill_ = p.dtype == DType::kF16 && a_.Sq >= 16 && cc >= 80;
    // The prefill tile: 64 rows x 64 keys (0), 128 x 32 (1) or 128 x 64 (2, the default: measured on
    // an H100 at B1 H32 D128, S4096 356 TFLOP/s against 311 and 257, S1024 279 against 249 and 172).
    // BWPROF_FLASH_TILE is a tuning knob for benchmarks.
    if (const char* e = std::getenv("BWPROF_FLASH_TILE")) tile_ = std::atoi(e);
#endif
    if (!prefill_) {
      G_ = group_ % 8 == 0 ? 8 : group_ % 4 == 0 ? 4 : group_ % 2 == 0 ? 2 : 1;
      const std::int64_t blocks = a_.B * a_.Hkv * (group_ / G_) * a_.Sq;
      const std::int64_t want = 8ll * g.sm_count();
      std::int64_t splits = 1;
      if (blocks < want) splits = std::min<std::int64_t>((want + blocks - 1) / blocks, (a_.Skv + 127) / 128);
      splits = std::max<std::int64_t>(splits, 1);
      split_len_ = static_cast<int>((a_.Skv + splits - 1) / splits);
      splits_ = static_cast<int>((a_.Skv + split_len_ - 1) / split_len_);
      if (splits_ > 1) {
        const std::size_t rows = static_cast<std::size_t>(a_.B * a_.H * a_.Sq);
        ws_o_ = DeviceBuffer(rows * splits_ * a_.D * sizeof(float), "attention split partials");
        ws_ml_ = DeviceBuffer(rows * splits_ * 2 * sizeof(float), "attention split statistics");
      }
    }
    res_ = dispatch(false);
  }
  void launch() override { dispatch(true); }
  Check check() override {
    g_.synchronize();
    O_.to(host_.O);
    return attention_check(host_, p_);
  }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(bool launch) {
    switch (a_.D) {
      case 32: return by_dtype<32>(launch);
      case 64: return by_dtype<64>(launch);
      default: return by_dtype<128>(launch);
    }
  }
  template <int D>
  Resources by_dtype(bool launch) {
    if (p_.dtype == DType::kF32) return host_.paged ? rows<float, D, true>(launch) : rows<float, D, false>(launch);
#if defined(BWPROF_CUDA)
    if (prefill_) {
      switch (tile_) {
        case 0: return host_.paged ? prefill<D, 1, 64, true>(launch) : prefill<D, 1, 64, false>(launch);
        case 1: return host_.paged ? prefill<D, 2, 32, true>(launch) : prefill<D, 2, 32, false>(launch);
        default: return host_.paged ? prefill<D, 2, 64, true>(launch) : prefill<D, 2, 64, false>(launch);
      }
    }
#endif
    return host_.paged ? rows<__half, D, true>(launch) : rows<__half, D, false>(launch);
  }
  template <class T, int D, bool PAGED>
  Resources rows(bool launch) {
    switch (G_) {
      case 8: return rows_g<T, D, 8, PAGED>(launch);
      case 4: return rows_g<T, D, 4, PAGED>(launch);
      case 2: return rows_g<T, D, 2, PAGED>(launch);
      default: return rows_g<T, D, 1, PAGED>(launch);
    }
  }
  template <class T, int D, int G, bool PAGED>
  Resources rows_g(bool launch) {
    auto* fn = &bwprof_attention_rows<T, D, G, PAGED>;
    if (!launch) return kernel_resources(fn, kRowThreads);
    const dim3 grid(static_cast<unsigned>(splits_), static_cast<unsigned>(a_.Sq * (group_ / G)),
                    static_cast<unsigned>(a_.B * a_.Hkv));
    fn<<<grid, kRowThreads, 0, g_.stream()>>>(Q_.get<T>(), K_.get<T>(), V_.get<T>(), O_.get<T>(),
                                              ws_o_.get<float>(), ws_ml_.get<float>(), kv_, int(a_.H), int(a_.Sq),
                                              group_, split_len_, scale_log2_, a_.causal);
    BWPROF_CHECK_LAUNCH("bwprof_attention_rows");
    if (splits_ > 1) {
      bwprof_attention_combine<T, D><<<static_cast<unsigned>(a_.B * a_.H * a_.Sq), D, 0, g_.stream()>>>(
          ws_o_.get<float>(), ws_ml_.get<float>(), O_.get<T>(), splits_);
      BWPROF_CHECK_LAUNCH("bwprof_attention_combine");
    }
    return {};
  }
#if defined(BWPROF_CUDA)
  template <int D, int MT, int BC, bool PAGED>
  Resources prefill(bool launch) {
    auto* fn = &bwprof_attention_prefill<D, MT, BC, PAGED>;
    constexpr int smem = PrefillCfg<D, MT, BC>::kBytes;
    constexpr int kBr = PrefillCfg<D, MT, BC>::kBr;
    if (!launch) {
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, smem));
      return kernel_resources(fn, kPrefillThreads, smem);
    }
    const dim3 grid(static_cast<unsigned>((a_.Sq + kBr - 1) / kBr), static_cast<unsigned>(a_.H),
                    static_cast<unsigned>(a_.B));
    fn<<<grid, kPrefillThreads, smem, g_.stream()>>>(Q_.get<__half>(), K_.get<__half>(), V_.get<__half>(),
                                                     O_.get<__half>(), kv_, int(a_.H), int(a_.Sq), group_,
                                                     scale_log2_, a_.causal);
    BWPROF_CHECK_LAUNCH("bwprof_attention_prefill");
    return {};
  }
#endif

  GpuBackend& g_;
  Problem p_;
  AttentionDims a_;
  AttentionData host_;
  DeviceBuffer Q_, K_, V_, O_, table_, ws_o_, ws_ml_;
  KvLayout kv_{};
  float scale_log2_ = 0;
  int group_ = 1, G_ = 1, splits_ = 1, split_len_ = 1;
  bool prefill_ = false;
  int tile_ = 2;
  Resources res_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_attention_gpu(Backend& b, const Problem& p) {
  return std::make_unique<AttentionGpu>(as_gpu(b), p);
}

}  // namespace bwprof
