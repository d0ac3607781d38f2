// Attention's rows kernel: one block per query row and group of query heads that share a KV head,
// FP32 (or FP16 storage) on the vector units; the KV length is split over several blocks when
// there are too few rows to fill the GPU (flash decoding), and a second kernel merges the splits'
// partial results. It serves FP32, decode and short queries everywhere, and every row on AMD.
#include <cmath>
#include <cstddef>

#include "attention/gpu.hpp"
#include "common/gpu_common.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace attention {

namespace {

using namespace gpu;

// exp2(a - b) where a may be -inf (an empty running state) and b is finite or -inf.
__device__ __forceinline__ float exp2_diff(float a, float b) { return a == -INFINITY ? 0.f : exp2f(a - b); }

constexpr int kRowThreads = 128;
constexpr int kRowWarps = kRowThreads / 32;
constexpr int kRowUnroll = 4;

constexpr int pow2_ceil(int x) { return x <= 1 ? 1 : 2 * pow2_ceil((x + 1) / 2); }

// How a key of D elements spreads over lanes: VECS 16-byte vectors, LPK lanes per key (a power of
// two, at most 32; lanes past VECS hold nothing, e.g. 10 vectors of an FP16 head of 80 on 16
// lanes), NV vectors per lane (2 for an FP32 head of 256).
template <class T, int D>
struct RowSplit {
  static constexpr int kVec = Elems<T>::kVec;
  static constexpr int kVecs = D / kVec;
  static constexpr int kLpk = pow2_ceil(kVecs) < 32 ? pow2_ceil(kVecs) : 32;
  static constexpr int kNv = (kVecs + kLpk - 1) / kLpk;
  static_assert(D % kVec == 0, "head_dim: a multiple of 16 bytes");
};

// grid: x = KV split, y = query row i * (group / G) + head chunk, z = b * kv_heads + kv head.
// A 32-lane group ("warp" here, half a wave on 64-wide AMD wavefronts) holds 32 / LPK keys at once,
// LPK lanes per key, each lane NV x 16 bytes of the key.
template <class T, int D, int G, bool PAGED>
__global__ void __launch_bounds__(kRowThreads)
    bwprof_attention_rows(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ Vm,
                          T* __restrict__ O, float* __restrict__ ws_o, float* __restrict__ ws_ml, KvLayout kv,
                          int heads, int seq_q, int group, int split_len, float scale_log2, bool causal) {
  using RS = RowSplit<T, D>;
  constexpr int VEC = RS::kVec, LPK = RS::kLpk, NV = RS::kNv, VECS = RS::kVecs;
  constexpr int KPW = 32 / LPK;
  constexpr int E = NV * VEC;  // elements of a key this lane holds
  const int chunks = group / G;
  const int i = blockIdx.y / chunks, hc = blockIdx.y % chunks;
  const int b = blockIdx.z / kv.kv_heads, kvh = blockIdx.z % kv.kv_heads;
  const int h0 = kvh * group + hc * G;  // first query head of this block
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int slot = lane / LPK, part = lane % LPK;
  const int visible = causal ? kv.seq_kv - seq_q + i + 1 : kv.seq_kv;
  const int k_begin = blockIdx.x * split_len;
  const int k_end = min(visible, k_begin + split_len);

  float q[G][E], o[G][E], m[G], l[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
#pragma unroll
    for (int v = 0; v < NV; ++v) {
      const int vi = part + v * LPK;  // this lane's v-th vector of the head
      uint4 raw = make_uint4(0, 0, 0, 0);
      if (vi < VECS)
        raw = *reinterpret_cast<const uint4*>(Q + ((static_cast<std::size_t>(b) * heads + h0 + g) * seq_q + i) * D +
                                              vi * VEC);
      unpack<T>(raw, q[g] + v * VEC);
    }
#pragma unroll
    for (int e = 0; e < E; ++e) q[g][e] *= scale_log2, o[g][e] = 0.f;
    m[g] = -INFINITY;
    l[g] = 0.f;
  }

  for (int base = k_begin + warp * KPW; base < k_end; base += kRowWarps * KPW * kRowUnroll) {
    uint4 kr[kRowUnroll][NV], vr[kRowUnroll][NV];
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int j = base + u * kRowWarps * KPW + slot;
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        const int vi = part + v * LPK;
        kr[u][v] = vr[u][v] = make_uint4(0, 0, 0, 0);
        if (j < k_end && vi < VECS) {
          const std::size_t off = kv.offset<PAGED, D>(b, kvh, j) + vi * VEC;
          kr[u][v] = *reinterpret_cast<const uint4*>(K + off);
          vr[u][v] = *reinterpret_cast<const uint4*>(Vm + off);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int j = base + u * kRowWarps * KPW + slot;
      float kf[E], vf[E], s[G];
#pragma unroll
      for (int v = 0; v < NV; ++v) unpack<T>(kr[u][v], kf + v * VEC);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float acc = 0.f;
#pragma unroll
        for (int e = 0; e < E; ++e) acc += q[g][e] * kf[e];
#pragma unroll
        for (int off = LPK / 2; off > 0; off >>= 1) acc += BWPROF_SHFL_XOR(acc, off);
        s[g] = acc;
      }
      if (j < k_end) {
#pragma unroll
        for (int v = 0; v < NV; ++v) unpack<T>(vr[u][v], vf + v * VEC);
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const float mn = fmaxf(m[g], s[g]);
          const float c = exp2_diff(m[g], mn), p = exp2f(s[g] - mn);
          l[g] = l[g] * c + p;
#pragma unroll
          for (int e = 0; e < E; ++e) o[g][e] = o[g][e] * c + p * vf[e];
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
      for (int e = 0; e < E; ++e) {
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
      for (int v = 0; v < NV; ++v) {
        const int vi = part + v * LPK;
        if (vi < VECS) {
#pragma unroll
          for (int e = 0; e < VEC; ++e) sm_o[warp][g][vi * VEC + e] = o[g][v * VEC + e];
        }
      }
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

// Merges the splits of each row: O = sum_s o_s 2^(m_s - M) / sum_s l_s 2^(m_s - M), in one pass
// with a running max (unrolled, so that several splits' loads are in flight at once).
template <class T, int D>
__global__ void __launch_bounds__(D) bwprof_attention_combine(const float* __restrict__ ws_o,
                                                              const float* __restrict__ ws_ml, T* __restrict__ O,
                                                              int splits) {
  const std::size_t row = blockIdx.x;
  const int x = threadIdx.x;
  float mx = -INFINITY, ls = 0.f, os = 0.f;
#pragma unroll 8
  for (int s = 0; s < splits; ++s) {
    const float m = ws_ml[(row * splits + s) * 2], l = ws_ml[(row * splits + s) * 2 + 1];
    const float o = ws_o[(row * splits + s) * D + x];
    const float mn = fmaxf(mx, m);
    const float c1 = exp2_diff(mx, mn), c2 = exp2_diff(m, mn);
    ls = ls * c1 + l * c2;
    os = os * c1 + o * c2;
    mx = mn;
  }
  O[row * D + x] = from_f<T>(os / ls);
}

template <class T, int D, int G, bool PAGED>
Resources rows_g(const Launch& l, bool launch) {
  auto* fn = &bwprof_attention_rows<T, D, G, PAGED>;
  if (!launch) return kernel_resources(fn, kRowThreads);
  const dim3 grid(static_cast<unsigned>(l.splits), static_cast<unsigned>(l.Sq * (l.group / G)),
                  static_cast<unsigned>(l.B * l.Hkv));
  fn<<<grid, kRowThreads, 0, l.stream>>>(static_cast<const T*>(l.Q), static_cast<const T*>(l.K),
                                         static_cast<const T*>(l.V), static_cast<T*>(l.O), l.ws_o, l.ws_ml, l.kv,
                                         int(l.H), int(l.Sq), l.group, l.split_len, l.scale_log2, l.causal);
  BWPROF_CHECK_LAUNCH("bwprof_attention_rows");
  if (l.splits > 1) combine(l, true);
  return {};
}

template <class T, int D>
void combine_t(const Launch& l) {
  bwprof_attention_combine<T, D><<<static_cast<unsigned>(l.B * l.H * l.Sq), D, 0, l.stream>>>(
      l.ws_o, l.ws_ml, static_cast<T*>(l.O), l.splits);
  BWPROF_CHECK_LAUNCH("bwprof_attention_combine");
}

template <class T, int D, bool PAGED>
Resources by_group(const Launch& l, bool launch) {
  switch (l.G) {
    case 8: return rows_g<T, D, 8, PAGED>(l, launch);
    case 4: return rows_g<T, D, 4, PAGED>(l, launch);
    case 2: return rows_g<T, D, 2, PAGED>(l, launch);
    default: return rows_g<T, D, 1, PAGED>(l, launch);
  }
}

template <class T, int D>
Resources by_paged(const Launch& l, bool launch) {
  return l.paged ? by_group<T, D, true>(l, launch) : by_group<T, D, false>(l, launch);
}

template <class T>
Resources by_dim(const Launch& l, bool launch) {
  switch (l.D) {
    case 32: return by_paged<T, 32>(l, launch);
    case 64: return by_paged<T, 64>(l, launch);
    case 80: return by_paged<T, 80>(l, launch);
    case 96: return by_paged<T, 96>(l, launch);
    case 128: return by_paged<T, 128>(l, launch);
    default: return by_paged<T, 256>(l, launch);
  }
}

}  // namespace

void combine(const Launch& l, bool launch) {
  if (!launch) return;
  by_dtype(l.dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    switch (l.D) {
      case 32: return combine_t<T, 32>(l);
      case 64: return combine_t<T, 64>(l);
      case 80: return combine_t<T, 80>(l);
      case 96: return combine_t<T, 96>(l);
      case 128: return combine_t<T, 128>(l);
      default: return combine_t<T, 256>(l);
    }
  });
}

Resources rows(const Launch& l, DType dtype, bool launch) {
  return by_dtype(dtype, [&](auto t) { return by_dim<typename decltype(t)::type>(l, launch); });
}

}  // namespace attention
}  // namespace bwprof
