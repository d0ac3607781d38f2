// The vector units' Q4_0 matmul kernel and its launch (q4_0/gpu.hpp's q4_vec_*), included by the
// files that instantiate it for one storage type each (matmul_vec_<type>.hip: a parallel build
// compiles them side by side).
#pragma once
#include <algorithm>
#include <cstddef>

#include "common/gpu_common.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {
namespace {

using namespace gpu;

// Y[m, n] = sum_k X[m, k] W[n, k] for MB rows of X at once. A warp takes kRows rows of W and
// issues the loads of all their quants before decoding any (more bytes in flight per warp, and
// each piece of X read once for both rows); X comes through the L1 cache (staging it in shared
// memory as FP32 made every lane's 16-byte reads land in the same banks: 4x slower on the H100).
constexpr int kMatBlock = 256;
constexpr int kQ4Unroll = 4;
constexpr int kRows = 2;
template <class T, int MB, bool TILED>
__global__ void __launch_bounds__(kMatBlock) bwprof_q4_0_matmul(const unsigned char* __restrict__ w,
                                                                const __half* __restrict__ scales,
                                                                const T* __restrict__ x, T* __restrict__ y,
                                                                int M, int N, int K) {
  constexpr int V = Elems<T>::kVec;
  const int warps = blockDim.x / warpSize;
  const int n0 = (blockIdx.x * warps + threadIdx.x / warpSize) * kRows;
  const int lane = threadIdx.x % warpSize;
  if (n0 >= N) return;
  const int nb = K / 32;
  float acc[kRows][MB];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) acc[r][m] = 0.f;
  for (int base = lane; base < nb; base += warpSize * kQ4Unroll) {
    unsigned qw[kRows][kQ4Unroll][4];
    float d[kRows][kQ4Unroll];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int u = 0; u < kQ4Unroll; ++u) {
        const int blk = base + u * warpSize;
        if (blk >= nb || n0 + r >= N) continue;
        const std::size_t at = static_cast<std::size_t>(n0 + r) * nb + blk;
        if (TILED) {
          const uint4 qv = reinterpret_cast<const uint4*>(w)[at];
          qw[r][u][0] = qv.x, qw[r][u][1] = qv.y, qw[r][u][2] = qv.z, qw[r][u][3] = qv.w;
          d[r][u] = __half2float(scales[at]);
        } else {
          d[r][u] = load_llama_block(w + at * kQ4BlockBytes, qw[r][u]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kQ4Unroll; ++u) {
      const int blk = base + u * warpSize;
      if (blk >= nb) continue;
#pragma unroll
      for (int m = 0; m < MB; ++m) {
        if (m >= M) break;
        float xf[32];
        const uint4* xv = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(m) * K + blk * 32);
#pragma unroll
        for (int i = 0; i < 32 / V; ++i) unpack<T>(xv[i], xf + i * V);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float s = 0.f;
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const unsigned lo = qw[r][u][i] & 0x0f0f0f0fu, hi = (qw[r][u][i] >> 4) & 0x0f0f0f0fu;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
              s += xf[4 * i + b] * nibble_minus_8(lo, b);
              s += xf[4 * i + b + 16] * nibble_minus_8(hi, b);
            }
          }
          acc[r][m] += s * d[r][u];  // the block's scale, once per block
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      if (m >= M) break;
      const float s = warp_sum(acc[r][m]);
      if (lane == 0 && n0 + r < N) y[static_cast<std::size_t>(m) * N + n0 + r] = from_f<T>(s);
    }
  }
}

// The kernel of up to 8 rows of X (MB: 1, 2, 4 or 8, the fewest that hold them), or its resources.
template <class T, int MB>
void q4_vec_go(const Q4VecArgs& a) {
  const int rows = kMatBlock / a.warp * kRows;
  const unsigned grid = (a.N + rows - 1) / rows;
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  if (a.tiled)
    bwprof_q4_0_matmul<T, MB, true><<<grid, kMatBlock, 0, a.stream>>>(a.w, a.scales, x, y, a.m, a.N, a.K);
  else
    bwprof_q4_0_matmul<T, MB, false><<<grid, kMatBlock, 0, a.stream>>>(a.w, nullptr, x, y, a.m, a.N, a.K);
}
template <class T>
void q4_vec_launch(const Q4VecArgs& a) {
  switch (a.m == 1 ? 1 : a.m == 2 ? 2 : a.m <= 4 ? 4 : 8) {
    case 1: return q4_vec_go<T, 1>(a);
    case 2: return q4_vec_go<T, 2>(a);
    case 4: return q4_vec_go<T, 4>(a);
    default: return q4_vec_go<T, 8>(a);
  }
}
template <class T>
Resources q4_vec_resources(bool tiled) {
  return tiled ? kernel_resources(bwprof_q4_0_matmul<T, 1, true>, kMatBlock)
               : kernel_resources(bwprof_q4_0_matmul<T, 1, false>, kMatBlock);
}

}  // namespace
}  // namespace bwprof
