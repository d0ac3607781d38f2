// The decode kernel's last step (decode_sm80.hpp): the last block of a KV head to finish merges every
// split's partials into O. Its threads are spread over rows, columns and splits, so that the merge costs
// a few round trips to L2 rather than a kernel of its own whose threads walk the splits one by one.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cstddef>

#include "attention/gpu.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"

namespace bwprof {
namespace attention {
namespace decode_detail {

using namespace gpu;

constexpr int kWarps = kDecodeWarps, kThreads = 32 * kWarps, kKeys = kDecodeStepKeys;
// Rows x splits of one KV head that the last block's merge holds (the host keeps splits within it).
constexpr int kDecodeMergeWeights = kDecodeMaxMerge;
constexpr int kDecodeMergeItems = kThreads;  // rows x D / 4 x parts: at most one float4 sum a thread
constexpr int kMergeBatch = 8;               // splits a thread reads at once in the merge

// The last block's merge of a KV head's splits: O = sum_s o_s w_s, w_s = 2^(m_s - M) / sum_s l_s
// 2^(m_s - M). The splits' (max, sum) pairs are read at once, one (row, split) a thread; each row's
// weights go to shared memory; then each thread sums a float4 of one row over a share of the splits
// (parts > 1 where rows x D / 4 is less than the block's threads), the parts added in shared memory. The
// partials are read from L2 (__ldcg): other blocks wrote them.
template <class T, int D>
__device__ __forceinline__ void merge_splits(float* sm, T* __restrict__ O, const float* __restrict__ ws_o,
                                             const float* __restrict__ ws_ml, int R, int b, int kvh, int heads,
                                             int seq_q, int group, int splits) {
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  float* wts = sm;                       // [row][split]: first the maxima, then the weights
  float* sums = sm + kDecodeMergeWeights;  // [part][row][D] (and before that the splits' sums)
  auto orow_of = [&](int r) {
    return (static_cast<std::size_t>(b) * heads + kvh * group + r % group) * seq_q + r / group;
  };
  float* lsum = sums;  // [row][split] the splits' sums, until the weights are made
  for (int idx = tid; idx < R * splits; idx += kThreads) {
    const int r = idx / splits, s = idx % splits;
    const float2 ml = __ldcg(reinterpret_cast<const float2*>(ws_ml) + orow_of(r) * splits + s);
    wts[idx] = ml.x;
    lsum[idx] = ml.y;
  }
  __syncthreads();
  for (int r = warp; r < R; r += kWarps) {  // a warp a row: its max, then the weights and their sum
    float mx = -INFINITY;
    for (int s = lane; s < splits; s += 32) mx = fmaxf(mx, wts[r * splits + s]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float tot = 0.f;
    for (int s = lane; s < splits; s += 32) {
      const float m = wts[r * splits + s];
      const float w = m == -INFINITY ? 0.f : exp2f(m - mx);
      wts[r * splits + s] = w;
      tot += lsum[r * splits + s] * w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) tot += __shfl_xor_sync(0xffffffffu, tot, o);
    const float inv = tot > 0.f ? 1.f / tot : 0.f;
    for (int s = lane; s < splits; s += 32) wts[r * splits + s] *= inv;
  }
  __syncthreads();  // the weights are made; lsum's space becomes the parts' sums
  const int cols = R * (D / 4);
  const int parts = max(1, min(splits, kDecodeMergeItems / cols));
  // Every load of a thread in flight at once: two items a pass and kMergeBatch splits a batch, the
  // loads predicated rather than in a loop of run-time length (the compiler issued that loop's loads
  // one round trip to L2 after another: 17 round trips at B16 H8/1 S2048 D128, 6.9 of the kernel's
  // 16.8 us; this way 2.6 us).
  for (int i0 = tid; i0 < cols * parts; i0 += 2 * kThreads) {
    float4 acc[2];
    const float4* src[2];
    const float* w[2];
    int row[2], x[2], p[2];
    bool in[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int idx = i0 + u * kThreads;
      in[u] = idx < cols * parts;
      const int c = (in[u] ? idx : 0) % cols;
      p[u] = (in[u] ? idx : 0) / cols, row[u] = c / (D / 4), x[u] = (c % (D / 4)) * 4;
      src[u] = reinterpret_cast<const float4*>(ws_o + orow_of(row[u]) * splits * D + x[u]);
      w[u] = wts + row[u] * splits;
      acc[u] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    for (int s0 = 0; s0 < splits; s0 += kMergeBatch * parts) {
      float4 v[2][kMergeBatch];
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int j = 0; j < kMergeBatch; ++j) {
          const int s = s0 + p[u] + j * parts;
          v[u][j] = in[u] && s < splits ? __ldcg(src[u] + static_cast<std::size_t>(s) * (D / 4)) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int j = 0; j < kMergeBatch; ++j) {
          const int s = s0 + p[u] + j * parts;
          const float ww = in[u] && s < splits ? w[u][s] : 0.f;
          acc[u].x = fmaf(v[u][j].x, ww, acc[u].x), acc[u].y = fmaf(v[u][j].y, ww, acc[u].y);
          acc[u].z = fmaf(v[u][j].z, ww, acc[u].z), acc[u].w = fmaf(v[u][j].w, ww, acc[u].w);
        }
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (!in[u]) continue;
      if (parts == 1)
        *reinterpret_cast<uint2*>(O + orow_of(row[u]) * D + x[u]) =
            make_uint2(pack2<T>(acc[u].x, acc[u].y), pack2<T>(acc[u].z, acc[u].w));
      else
        *reinterpret_cast<float4*>(sums + 4 * (i0 + u * kThreads)) = acc[u];
    }
  }
  if (parts == 1) return;
  __syncthreads();
  for (int c = tid; c < cols; c += kThreads) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int p = 0; p < parts; ++p) {
      const float4 o = *reinterpret_cast<const float4*>(sums + 4 * (p * cols + c));
      acc.x += o.x, acc.y += o.y, acc.z += o.z, acc.w += o.w;
    }
    const int r = c / (D / 4), x = (c % (D / 4)) * 4;
    *reinterpret_cast<uint2*>(O + orow_of(r) * D + x) = make_uint2(pack2<T>(acc.x, acc.y), pack2<T>(acc.z, acc.w));
  }
}

}  // namespace decode_detail
}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
