// Experiment: GEMV kernel shapes side by side on this GPU (L2 flushed before each run, events
// around the kernel alone, median of 30), each checked against a float64 host reference.
//   FP16 GEMV y = W.x: the library's kernel (one warp per row, x staged in shared memory) against
//     split-row kernels (R rows per block, TPR threads per row, U 16-byte loads per thread in flight).
//   Q4_0 GEMV/matmul: the library's `tiled` kernel against a tensor-core one on a fragment-ordered
//     layout (16-row tiles, 64-wide K chunks; each lane's 16 bytes are its A fragments for 4 mma).
// Standalone so it builds in seconds:
//   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -o /tmp/gv benchmarks/experiments/gemv_variants.cu && /tmp/gv
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "q4_0/mma_sm80.hpp"

using namespace bwprof::gpu;

#define CK(x) do { cudaError_t ck_ = (x); if (ck_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(ck_)); exit(1); } } while (0)

// ---------------------------------------------------------------- FP16 GEMV -------------------
constexpr int kBlock = 256;
constexpr int kUnroll = 16;
// The library's kernel (FP16 path, K % 8 == 0), for the baseline.
__global__ void __launch_bounds__(kBlock) gemv_lib(const __half* __restrict__ W, const __half* __restrict__ x,
                                                   __half* __restrict__ y, int N, int K) {
  constexpr int V = 8;
  extern __shared__ uint4 smem[];
  const int warps = blockDim.x / warpSize;
  const int row = blockIdx.x * warps + threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  float acc = 0.f;
  const int kvec = K / V;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const uint4* wr = reinterpret_cast<const uint4*>(W + static_cast<std::size_t>(row < N ? row : 0) * K);
  uint4 wv[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int i = lane + u * warpSize;
    if (i < kvec) wv[u] = wr[i];
  }
  for (int i = threadIdx.x; i < kvec; i += blockDim.x) smem[i] = xv[i];
  __syncthreads();
  if (row >= N) return;
  for (int base = lane; base < kvec; base += warpSize * kUnroll) {
    if (base != lane) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * warpSize;
        if (i < kvec) wv[u] = wr[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * warpSize;
      if (i >= kvec) continue;
      float fw[V], fx[V];
      unpack<__half>(wv[u], fw);
      unpack<__half>(smem[i], fx);
#pragma unroll
      for (int e = 0; e < V; ++e) acc += fw[e] * fx[e];
    }
  }
  acc = warp_sum(acc);
  if (lane == 0) y[row] = __float2half_rn(acc);
}


// R rows per block, TPR threads per row (a multiple of 32), U loads of W per thread in flight; x
// through L1 at the same vector index; partial sums reduced over the row's warps in shared memory.
template <int R, int TPR, int U, bool NA>
__global__ void __launch_bounds__(R * TPR) gemv_split(const __half* __restrict__ W, const __half* __restrict__ x,
                                                      __half* __restrict__ y, int N, int K) {
  constexpr int WPR = TPR / 32;
  __shared__ float red[R * WPR];
  const int kvec = K / 8;
  const int r = threadIdx.x / TPR, j = threadIdx.x % TPR;
  const int row = blockIdx.x * R + r;
  const uint4* wr = reinterpret_cast<const uint4*>(W + static_cast<std::size_t>(row < N ? row : N - 1) * K);
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  float acc = 0.f;
  for (int base = j; base < kvec; base += TPR * U) {
    uint4 wv[U], xx[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = base + u * TPR;
      if (i < kvec) wv[u] = NA ? load_stream(wr + i) : wr[i];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = base + u * TPR;
      if (i < kvec) xx[u] = __ldg(xv + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = base + u * TPR;
      if (i >= kvec) continue;
      float fw[8], fx[8];
      unpack<__half>(wv[u], fw);
      unpack<__half>(xx[u], fx);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc += fw[e] * fx[e];
    }
  }
  acc = warp_sum(acc);
  if (WPR > 1) {
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = acc;
    __syncthreads();
    if (j == 0) {
      acc = 0.f;
#pragma unroll
      for (int w = 0; w < WPR; ++w) acc += red[r * WPR + w];
    }
  }
  if (j == 0 && row < N) y[row] = __float2half_rn(acc);
}

// ---------------------------------------------------------------- Q4_0 ------------------------
constexpr int kQ4BlockBytes = 18;
__device__ __forceinline__ float nibble_minus_8(unsigned nibbles, int byte) {
  const unsigned bits = __byte_perm(nibbles, 0x4B000000u, byte | (4 << 4) | (5 << 8) | (7 << 12));
  return __uint_as_float(bits) - 8388616.0f;
}
constexpr int kMatBlock = 256;
constexpr int kQ4Unroll = 4;
constexpr int kRows = 2;
// The library's `tiled` kernel (FP16), for the baseline.
template <int MB>
__global__ void __launch_bounds__(kMatBlock) q4_lib(const unsigned char* __restrict__ w, const __half* __restrict__ scales,
                                                    const __half* __restrict__ x, __half* __restrict__ y, int M, int N, int K) {
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
        const uint4 qv = reinterpret_cast<const uint4*>(w)[at];
        qw[r][u][0] = qv.x, qw[r][u][1] = qv.y, qw[r][u][2] = qv.z, qw[r][u][3] = qv.w;
        d[r][u] = __half2float(scales[at]);
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
        for (int i = 0; i < 4; ++i) unpack<__half>(xv[i], xf + i * 8);
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
          acc[r][m] += s * d[r][u];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      if (m >= M) break;
      const float s = warp_sum(acc[r][m]);
      if (lane == 0 && n0 + r < N) y[static_cast<std::size_t>(m) * N + n0 + r] = __float2half_rn(s);
    }
}

// ---------------------------------------------------------------- host ------------------------
static float h2f(unsigned short h) {
  const unsigned s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 1024), int(e) - 25);
  return s ? -v : v;
}
static unsigned short f2h(float f) {  // round to nearest for normal range values used here
  __half h = __float2half_rn(f);
  unsigned short u;
  std::memcpy(&u, &h, 2);
  return u;
}

__global__ void read_all(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  unsigned a = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) a ^= p[i].x ^ p[i].w;
  if (a == 0x12345678u) *sink = a;
}
struct Timer {
  char* scrub;
  int* clean;
  unsigned* sink;
  size_t l2;
  cudaEvent_t s, e;
  Timer() {
    int l2i;
    CK(cudaDeviceGetAttribute(&l2i, cudaDevAttrL2CacheSize, 0));
    l2 = std::max<size_t>(2 * (size_t)l2i, 32 << 20);
    CK(cudaMalloc(&scrub, l2));
    CK(cudaMalloc(&clean, l2));
    CK(cudaMemset(clean, 0, l2));
    CK(cudaMalloc(&sink, 4));
    cudaEventCreate(&s);
    cudaEventCreate(&e);
  }
  double median_us(const std::function<void()>& launch, int reps = 30) {
    std::vector<float> t;
    for (int i = 0; i < reps + 3; ++i) {
      CK(cudaMemsetAsync(scrub, i & 0xff, l2));
      read_all<<<264, 256>>>(reinterpret_cast<const uint4*>(clean), l2 / 16, sink);  // read another buffer
      CK(cudaEventRecord(s));
      launch();
      CK(cudaEventRecord(e));
      CK(cudaEventSynchronize(e));
      CK(cudaGetLastError());
      float ms;
      cudaEventElapsedTime(&ms, s, e);
      if (i >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2] * 1e3;
  }
};

static double rel_err(const std::vector<unsigned short>& y, const std::vector<double>& gold, const std::vector<int>& idx) {
  double md = 0, mg = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const float v = h2f(y[idx[i]]);
    if (!std::isfinite(v)) return 1e30;
    md = std::max(md, std::fabs(v - gold[i]));
    mg = std::max(mg, std::fabs(gold[i]));
  }
  return md / mg;
}

static void gemv_case(Timer& tm, int N, int K) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> U(-1, 1);
  std::vector<unsigned short> W((size_t)N * K), x(K), y(N);
  for (auto& v : W) v = f2h(U(rng));
  for (auto& v : x) v = f2h(U(rng));
  std::vector<int> idx;
  for (int n = 0; n < N; n += std::max(1, N / 300)) idx.push_back(n);
  idx.push_back(N - 1);
  std::vector<double> gold;
  for (int n : idx) {
    double a = 0;
    for (int k = 0; k < K; ++k) a += double(h2f(W[(size_t)n * K + k])) * h2f(x[k]);
    gold.push_back(a);
  }
  __half *dW, *dx, *dy;
  CK(cudaMalloc(&dW, W.size() * 2));
  CK(cudaMalloc(&dx, K * 2));
  CK(cudaMalloc(&dy, N * 2));
  CK(cudaMemcpy(dW, W.data(), W.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), K * 2, cudaMemcpyHostToDevice));
  const double bytes = ((double)N * K + K + N) * 2;
  auto run = [&](const char* name, const std::function<void()>& launch) {
    CK(cudaMemset(dy, 0xff, N * 2));  // NaN poison
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(y.data(), dy, N * 2, cudaMemcpyDeviceToHost));
    const double err = rel_err(y, gold, idx);
    const double us = tm.median_us(launch);
    printf("GEMVX fp16 %5dx%-5d %-28s %7.2f us %6.3f TB/s err %.1e%s\n", N, K, name, us, bytes / us / 1e6, err,
           err < 4e-3 ? "" : " WRONG");
  };
  run("lib", [&] { gemv_lib<<<(N + 7) / 8, 256, K * 2>>>(dW, dx, dy, N, K); });
#define SPLIT(R, TPR, U, NA) \
  run("split R" #R " TPR" #TPR " U" #U " NA" #NA, [&] { gemv_split<R, TPR, U, NA><<<(N + R - 1) / R, R * TPR>>>(dW, dx, dy, N, K); })
  SPLIT(1, 256, 2, true);
  SPLIT(1, 128, 4, true);
  SPLIT(2, 128, 2, true);
  CK(cudaFree(dW));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
}

static void q4_case(Timer& tm, int M, int N, int K) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> U(-1, 1);
  const int nb = K / 32, nch = (nb + 1) / 2, tiles = (N + 15) / 16;
  std::vector<unsigned char> blocks((size_t)N * nb * kQ4BlockBytes);
  for (size_t b = 0; b < (size_t)N * nb; ++b) {
    unsigned short d = f2h(0.02f + 0.1f * std::fabs(U(rng)));
    std::memcpy(&blocks[b * 18], &d, 2);
    for (int i = 0; i < 16; ++i) blocks[b * 18 + 2 + i] = rng() & 0xff;
  }
  std::vector<unsigned short> x((size_t)M * K), y((size_t)M * N);
  for (auto& v : x) v = f2h(U(rng));
  auto qv = [&](int n, int blk, int e) -> int {  // quant of element e of block blk of row n (0 for padding)
    if (n >= N || blk >= nb) return 0;
    const unsigned char* p = &blocks[((size_t)n * nb + blk) * 18 + 2];
    return e < 16 ? p[e] & 15 : p[e - 16] >> 4;
  };
  auto dv = [&](int n, int blk) -> unsigned short {
    if (n >= N || blk >= nb) return 0;
    unsigned short d;
    std::memcpy(&d, &blocks[((size_t)n * nb + blk) * 18], 2);
    return d;
  };
  // library tiled layout
  std::vector<unsigned char> tq((size_t)N * nb * 16);
  std::vector<unsigned short> ts((size_t)N * nb);
  for (size_t b = 0; b < (size_t)N * nb; ++b) {
    std::memcpy(&ts[b], &blocks[b * 18], 2);
    std::memcpy(&tq[b * 16], &blocks[b * 18 + 2], 16);
  }
  // fragment-ordered layout (the library's packer)
  std::vector<unsigned> fq(q4_frag_quant_bytes(N, K) / 4);
  std::vector<unsigned short> fs(q4_frag_scale_bytes(N, K) / 2);
  q4_frag_pack(blocks.data(), N, K, 0, tiles, reinterpret_cast<std::uint8_t*>(fq.data()),
               reinterpret_cast<std::uint8_t*>(fs.data()));
  std::vector<int> idx;
  for (int n = 0; n < N; n += std::max(1, N / 200)) idx.push_back(n);
  idx.push_back(N - 1);
  std::vector<int> yidx;
  std::vector<double> gold;
  for (int m = 0; m < M; ++m)
    for (int n : idx) {
      double a = 0;
      for (int blk = 0; blk < nb; ++blk) {
        const double d = h2f(dv(n, blk));
        for (int e = 0; e < 32; ++e) a += d * (qv(n, blk, e) - 8) * h2f(x[(size_t)m * K + blk * 32 + e]);
      }
      gold.push_back(a);
      yidx.push_back(m * N + n);
    }
  unsigned char *dtq;
  unsigned short* dts;
  uint4* dfq;
  uint2* dfs;
  __half *dx, *dy;
  CK(cudaMalloc(&dtq, tq.size()));
  CK(cudaMalloc(&dts, ts.size() * 2));
  CK(cudaMalloc(&dfq, fq.size() * 4));
  CK(cudaMalloc(&dfs, fs.size() * 2));
  CK(cudaMalloc(&dx, x.size() * 2));
  CK(cudaMalloc(&dy, y.size() * 2));
  CK(cudaMemcpy(dtq, tq.data(), tq.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dts, ts.data(), ts.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dfq, fq.data(), fq.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dfs, fs.data(), fs.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  const double bytes = (double)N * nb * 18 + (double)M * K * 2 + (double)M * N * 2;
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto run = [&](const char* name, const std::function<void()>& launch) {
    CK(cudaMemset(dy, 0xff, y.size() * 2));
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(y.data(), dy, y.size() * 2, cudaMemcpyDeviceToHost));
    const double err = rel_err(y, gold, yidx);
    const double us = tm.median_us(launch);
    printf("Q4X M=%d %5dx%-5d %-28s %7.2f us %6.3f TB/s err %.1e%s\n", M, N, K, name, us, bytes / us / 1e6, err,
           err < 4e-3 ? "" : " WRONG");
  };
  if (M == 1) run("lib", [&] { q4_lib<1><<<(N + 15) / 16, 256>>>(dtq, reinterpret_cast<__half*>(dts), dx, dy, M, N, K); });
  else run("lib", [&] { q4_lib<8><<<(N + 15) / 16, 256>>>(dtq, reinterpret_cast<__half*>(dts), dx, dy, M, N, K); });
#define MMA(W, U, JIT, MINB)                                                                                     \
  do {                                                                                                      \
    int occ = 0;                                                                                            \
    auto* fn = bwprof_q4_0_matmul_mma<W, U, JIT, MINB>;                                                           \
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, W * 32, 0));                                 \
    char nm[64];                                                                                            \
    cudaFuncAttributes fa;                                                                                  \
    CK(cudaFuncGetAttributes(&fa, fn));                                                                     \
    snprintf(nm, sizeof nm, "mma W%d U%d%s mb%d r%d o%d", W, U, JIT ? " jit" : "", MINB, fa.numRegs, occ);              \
    run(nm, [&] { fn<<<tiles, W * 32>>>(dfq, dfs, dx, dy, M, N, K); });                                     \
  } while (0)
  MMA(8, 4, false, 0);
  MMA(8, 4, false, 3);
  MMA(8, 4, false, 4);
  MMA(8, 3, false, 1);
  MMA(16, 2, false, 2);
  MMA(8, 6, false, 1);
  MMA(4, 4, false, 6);
  MMA(16, 1, false, 3);
  CK(cudaFree(dtq));
  CK(cudaFree(dts));
  CK(cudaFree(dfq));
  CK(cudaFree(dfs));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
}

int main(int argc, char** argv) {
  Timer tm;
  // odd shapes first: correctness of the fragment layout's padding (rows, K not a multiple of 64)
  q4_case(tm, 1, 1001, 4096);
  q4_case(tm, 5, 77, 160);
  q4_case(tm, 8, 130, 96);
  q4_case(tm, 1, 14336, 4096);
  q4_case(tm, 1, 4096, 14336);
  q4_case(tm, 8, 14336, 4096);
  gemv_case(tm, 4096, 4096);
  gemv_case(tm, 14336, 4096);
  gemv_case(tm, 4096, 14336);
  return 0;
}
