// Experiment (issue #3, second round): where the fixed ~5 us of a 32 MB GEMV goes (an empty kernel and
// pure reads of 8 to 112 MiB under the same timing), one-shot and interleaved-persistent GEMV shapes,
// and Q4_0 GEMV kernels: the library's round-based kernel, the software-pipelined `ring` kernel
// (adopted), interleaved persistent ones and, with `persistent`, the persistent, bulk-copy and cluster
// split-K kernels of gemv_persistent.hpp (slower, not adopted). Results: gemv_notes.md, round 2.
// Timing is bwprof's: before every timed run a buffer twice the L2 is written (memset 0x5a) and
// another one read, device events on a non-blocking stream around the kernel alone, median of 30
// after 3 warm-ups. Every variant's output is checked against a float64 host reference on sampled
// rows (the output poisoned with NaN before).
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels -o gv2 benchmarks/experiments/gemv2_variants.cu && ./gv2 [gemv|q4|persistent|ncu]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "q4_0/mma_sm80.hpp"
#include "gemv_persistent.hpp"

using namespace bwprof::gpu;

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t ck_ = (x);                                                                      \
    if (ck_ != cudaSuccess) {                                                                   \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(ck_));                \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

static int g_sms = 132;
static int g_reps = 30;
static bool g_persistent = false;  // also time run 1's persistent kernels
static bool g_ncu = false;         // one launch of a few kernels each, for ncu

// ---------------------------------------------------------------- timing (bwprof's method) ----
__global__ void __launch_bounds__(256) read_flush(const uint4* __restrict__ p, size_t n, unsigned* __restrict__ sink) {
  unsigned acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void empty_kernel(int* p) {
  if (p && threadIdx.x == 12345) *p = 0;
}

struct Timer {
  char *scrub, *clean;
  size_t bytes;
  cudaStream_t st;
  cudaEvent_t s, e;
  Timer() {
    int l2;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    bytes = (size_t)std::max(2.0 * l2, 32e6) / 16 * 16;
    CK(cudaMalloc(&scrub, bytes));
    CK(cudaMalloc(&clean, bytes));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMemsetAsync(clean, 0, bytes, st));
    CK(cudaEventCreate(&s));
    CK(cudaEventCreate(&e));
  }
  void flush() {
    CK(cudaMemsetAsync(scrub, 0x5a, bytes, st));
    const size_t n = bytes / 16;
    const unsigned grid = (unsigned)std::min<size_t>((n + 255) / 256, (size_t)g_sms * 8);
    read_flush<<<grid, 256, 0, st>>>(reinterpret_cast<const uint4*>(clean), n - 1,
                                      reinterpret_cast<unsigned*>(clean + bytes - 16));
  }
  // median, and min, microseconds of `launch` on stream st
  std::pair<double, double> time(const std::function<void()>& launch) {
    std::vector<float> t;
    for (int i = 0; i < g_reps + 3; ++i) {
      flush();
      CK(cudaEventRecord(s, st));
      launch();
      CK(cudaEventRecord(e, st));
      CK(cudaEventSynchronize(e));
      CK(cudaGetLastError());
      float ms;
      CK(cudaEventElapsedTime(&ms, s, e));
      if (i >= 3) t.push_back(ms * 1e3f);
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t[0]};
  }
};

static float h2f(unsigned short h) {
  const unsigned s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 1024), int(e) - 25);
  return s ? -v : v;
}
static unsigned short f2h(float f) {
  __half h = __float2half_rn(f);
  unsigned short u;
  std::memcpy(&u, &h, 2);
  return u;
}
static double rel_err(const std::vector<unsigned short>& y, const std::vector<double>& gold, const std::vector<size_t>& idx) {
  double md = 0, mg = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const float v = h2f(y[idx[i]]);
    if (!std::isfinite(v)) return 1e30;
    md = std::max(md, std::fabs(v - gold[i]));
    mg = std::max(mg, std::fabs(gold[i]));
  }
  return mg > 0 ? md / mg : md;
}
template <class F>
static int regs_of(F* fn) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(fn)));
  return a.numRegs;
}
template <class F>
static int occ_of(F* fn, int threads, size_t smem) {
  int o = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o, fn, threads, smem) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return o;
}

// ---------------------------------------------------------------- pure reads ------------------
// As the library GEMV's geometry: one block of 256 threads per 8 KB, two 16-byte loads per thread.
__global__ void __launch_bounds__(256) read_oneshot(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t i = (size_t)blockIdx.x * 512 + threadIdx.x;
  uint4 a = make_uint4(0, 0, 0, 0), b = a;
  if (i < n) a = load_stream(p + i);
  if (i + 256 < n) b = load_stream(p + i + 256);
  const unsigned v = a.x ^ a.w ^ b.x ^ b.w;
  if (v == 0x9e3779b9u) *sink = v;
}
// One-shot of other shapes: TH threads, L loads each, a block reads TH * L vectors.
template <int TH, int L>
__global__ void __launch_bounds__(TH) read_shot(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t i = (size_t)blockIdx.x * TH * L + threadIdx.x;
  uint4 r[L];
#pragma unroll
  for (int l = 0; l < L; ++l) {
    r[l] = make_uint4(0, 0, 0, 0);
    load_stream_if(r[l], p + i + l * TH, i + l * TH < n);
  }
  unsigned v = 0;
#pragma unroll
  for (int l = 0; l < L; ++l) v ^= r[l].x ^ r[l].w;
  if (v == 0x9e3779b9u) *sink = v;
}
__global__ void __launch_bounds__(256) empty_wide(int* p) {
  if (p && threadIdx.x == 12345) *p = 0;
}
// Persistent: block b owns a contiguous range, U predicated loads per thread in flight, pipelined.
template <int U>
__global__ void __launch_bounds__(256) read_persist(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t per = (n + gridDim.x - 1) / gridDim.x;
  const size_t lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  uint4 r[U];
  size_t i = lo + threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    r[u] = make_uint4(0, 0, 0, 0);
    load_stream_if(r[u], p + i + u * 256, i + u * 256 < hi);
  }
  unsigned acc = 0;
  for (size_t base = lo + threadIdx.x; base < hi; base += 256 * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + u * 256 < hi) acc ^= r[u].x ^ r[u].w;
      const size_t nx = base + (u + U) * 256;
      load_stream_if(r[u], p + nx, nx < hi);
    }
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// Persistent, grid-stride (the grid sweeps memory in order): U loads per thread in flight, pipelined.
template <int U>
__global__ void __launch_bounds__(256) read_stride(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t step = (size_t)gridDim.x * 256;
  uint4 r[U];
  size_t i = (size_t)blockIdx.x * 256 + threadIdx.x;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    r[u] = make_uint4(0, 0, 0, 0);
    load_stream_if(r[u], p + i + u * step, i + u * step < n);
  }
  unsigned acc = 0;
  for (; i < n; i += U * step) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (i + u * step < n) acc ^= r[u].x ^ r[u].w;
      const size_t nx = i + (u + U) * step;
      load_stream_if(r[u], p + nx, nx < n);
    }
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// ---------------------------------------------------------------- FP16 GEMV -------------------
// The library's kernel at 256 threads per row (long rows), for the baseline.
__global__ void __launch_bounds__(256, 8) gemv_lib(const __half* __restrict__ W, const __half* __restrict__ x,
                                                   __half* __restrict__ y, int N, int K) {
  __shared__ float red[8];
  const int j = threadIdx.x, row = blockIdx.x;
  const __half* wrow = W + (size_t)row * K;
  float acc = 0.f;
  const int kvec = K / 8;
  const uint4* wr = reinterpret_cast<const uint4*>(wrow);
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  for (int base = j; base < kvec; base += 512) {
    uint4 wv[2], xx[2];
#pragma unroll
    for (int u = 0; u < 2; ++u)
      if (base + u * 256 < kvec) wv[u] = load_stream(wr + base + u * 256);
#pragma unroll
    for (int u = 0; u < 2; ++u)
      if (base + u * 256 < kvec) xx[u] = xv[base + u * 256];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      if (base + u * 256 >= kvec) continue;
      float fw[8], fx[8];
      unpack<__half>(wv[u], fw);
      unpack<__half>(xx[u], fx);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc += fw[e] * fx[e];
    }
  }
  acc = warp_sum(acc);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = acc;
  __syncthreads();
  if (j == 0) {
    acc = 0.f;
    for (int w = 0; w < 8; ++w) acc += red[w];
    y[row] = __float2half_rn(acc);
  }
}

// One row per block of TH threads, L 16-byte loads each per round (the library kernel is TH 256, L 2).
template <int TH, int L>
__global__ void __launch_bounds__(TH) gemv_shot(const __half* __restrict__ W, const __half* __restrict__ x,
                                                __half* __restrict__ y, int N, int K) {
  __shared__ float red[TH / 32];
  const int j = threadIdx.x, row = blockIdx.x;
  const uint4* wr = reinterpret_cast<const uint4*>(W + (size_t)row * K);
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const int kvec = K / 8;
  float acc = 0.f;
  for (int base = j; base < kvec; base += TH * L) {
    uint4 wv[L], xx[L];
#pragma unroll
    for (int u = 0; u < L; ++u) {
      wv[u] = make_uint4(0, 0, 0, 0);
      load_stream_if(wv[u], wr + base + u * TH, base + u * TH < kvec);
    }
#pragma unroll
    for (int u = 0; u < L; ++u) {
      xx[u] = make_uint4(0, 0, 0, 0);
      load_cached_if(xx[u], xv + base + u * TH, base + u * TH < kvec);
    }
#pragma unroll
    for (int u = 0; u < L; ++u) {
      float fw[8], fx[8];
      unpack<__half>(wv[u], fw);
      unpack<__half>(xx[u], fx);
#pragma unroll
      for (int e = 0; e < 8; ++e) acc += fw[e] * fx[e];
    }
  }
  acc = warp_sum(acc);
  if (TH > 32) {
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = acc;
    __syncthreads();
    if (j == 0) {
      acc = 0.f;
#pragma unroll
      for (int w = 0; w < TH / 32; ++w) acc += red[w];
    }
  }
  if (j == 0) y[row] = __float2half_rn(acc);
}

static void gemv_case(Timer& tm, int N, int K, bool timed) {
  std::mt19937 rng(N * 31 + K);
  std::uniform_real_distribution<float> U(-1, 1);
  std::vector<unsigned short> W((size_t)N * K), x(K), y(N);
  for (auto& v : W) v = f2h(U(rng));
  for (auto& v : x) v = f2h(U(rng));
  std::vector<size_t> idx;
  for (int n = 0; n < N; n += std::max(1, N / 300)) idx.push_back(n);
  idx.push_back(N - 1);
  std::vector<double> gold;
  for (size_t n : idx) {
    double a = 0;
    for (int k = 0; k < K; ++k) a += double(h2f(W[n * K + k])) * h2f(x[k]);
    gold.push_back(a);
  }
  __half *dW, *dx, *dy;
  unsigned* sink;
  CK(cudaMalloc(&dW, W.size() * 2));
  CK(cudaMalloc(&dx, K * 2));
  CK(cudaMalloc(&dy, N * 2));
  CK(cudaMalloc(&sink, 16));
  CK(cudaMemcpy(dW, W.data(), W.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), K * 2, cudaMemcpyHostToDevice));
  const double bytes = ((double)N * K + K + N) * 2;
  const int kvec = K / 8;
  cudaStream_t st = tm.st;
  auto run = [&](const std::string& name, const std::function<void()>& launch, bool check = true) {
    double err = 0;
    if (check) {
      CK(cudaMemsetAsync(dy, 0xff, N * 2, st));
      launch();
      CK(cudaStreamSynchronize(st));
      CK(cudaGetLastError());
      CK(cudaMemcpy(y.data(), dy, N * 2, cudaMemcpyDeviceToHost));
      err = rel_err(y, gold, idx);
    }
    if (!timed || g_ncu) {
      if (g_ncu && !check) {
        launch();
        CK(cudaStreamSynchronize(st));
      }
      printf("GEMV %5dx%-5d %-34s check err %.1e%s\n", N, K, name.c_str(), err, err < 4e-3 ? "" : " WRONG");
      return;
    }
    auto [med, mn] = tm.time(launch);
    printf("GEMV %5dx%-5d %-34s %7.2f us (min %6.2f) %6.3f TB/s err %.1e%s\n", N, K, name.c_str(), med, mn,
           bytes / med / 1e6, err, err < 4e-3 ? "" : " WRONG");
  };
  if (timed && N == 4096 && K == 4096) {
    run("empty kernel 1x32", [&] { empty_kernel<<<1, 32, 0, st>>>(nullptr); }, false);
    run("empty kernel 4096x256", [&] { empty_wide<<<4096, 256, 0, st>>>(nullptr); }, false);
    const size_t n = (size_t)N * K / 8;
    run("read oneshot (lib geometry)", [&] { read_oneshot<<<(unsigned)((n + 511) / 512), 256, 0, st>>>(reinterpret_cast<uint4*>(dW), n, sink); }, false);
#define SHOT(TH, L) \
    run("read shot TH" #TH " L" #L, [&] { read_shot<TH, L><<<(unsigned)((n + TH * L - 1) / (TH * L)), TH, 0, st>>>(reinterpret_cast<uint4*>(dW), n, sink); }, false)
    if (!g_ncu) {
    SHOT(256, 1);
    SHOT(256, 2);
    SHOT(256, 4);
    SHOT(128, 4);
    SHOT(512, 1);
    SHOT(512, 2);
    SHOT(1024, 1);
    SHOT(64, 8);
    for (int b : {4, 8}) {
      run("read stride U2 b" + std::to_string(b), [&] { read_stride<2><<<g_sms * b, 256, 0, st>>>(reinterpret_cast<uint4*>(dW), n, sink); }, false);
      run("read stride U4 b" + std::to_string(b), [&] { read_stride<4><<<g_sms * b, 256, 0, st>>>(reinterpret_cast<uint4*>(dW), n, sink); }, false);
    }
    }
  }
  if (timed && N == 14336 && K == 4096) {  // the same read at 8 to 112 MB: fixed cost and slope
    for (size_t mb : {8, 16, 32, 64, 112}) {
      const size_t n = mb * (1 << 20) / 16;
      run("read oneshot " + std::to_string(mb) + " MiB", [&] { read_oneshot<<<(unsigned)((n + 511) / 512), 256, 0, st>>>(reinterpret_cast<uint4*>(dW), n, sink); }, false);
    }
  }
  run("lib (256 thr/row)", [&] { gemv_lib<<<N, 256, 0, st>>>(dW, dx, dy, N, K); });
#define GSHOT(TH, L) run("shot TH" #TH " L" #L " r" + std::to_string(regs_of(gemv_shot<TH, L>)), [&] { gemv_shot<TH, L><<<N, TH, 0, st>>>(dW, dx, dy, N, K); })
  if (!g_ncu) {
    GSHOT(256, 2);
    GSHOT(128, 4);
    GSHOT(512, 1);
    GSHOT(64, 8);
    GSHOT(256, 1);
    GSHOT(1024, 1);
  }
  {  // persistent, rows interleaved over the grid (b, b + G, ...): needs at most kGemvMaxRows rows a block
    const unsigned gi2 = (unsigned)std::max(g_sms * 2, (N + kGemvMaxRows - 1) / kGemvMaxRows);
    const unsigned gi4 = (unsigned)std::max(g_sms * 4, (N + kGemvMaxRows - 1) / kGemvMaxRows);
    if (kvec <= 512) {
      run("rows IL TH256 V2 D4 b2", [&] { bwprof_gemv_rows<__half, 256, 2, 4, true><<<gi2, 256, 0, st>>>(dW, dx, dy, N, K); });
      run("rows IL TH256 V2 D2 b4", [&] { bwprof_gemv_rows<__half, 256, 2, 2, true><<<gi4, 256, 0, st>>>(dW, dx, dy, N, K); });
      run("rows IL TH512 V1 D4 b2", [&] { bwprof_gemv_rows<__half, 512, 1, 4, true><<<gi2, 512, 0, st>>>(dW, dx, dy, N, K); });
    }
  }
  if (g_persistent) {
  auto grid_rows = [&](int b) { return (unsigned)std::max(std::min(N, g_sms * b), (N + kGemvMaxRows - 1) / kGemvMaxRows); };
#define ROWS(TH, V, D, B)                                                                                   \
  if (kvec <= TH * V) {                                                                                     \
    auto* fn = bwprof_gemv_rows<__half, TH, V, D>;                                                          \
    char nm[80];                                                                                            \
    snprintf(nm, sizeof nm, "rows TH%d V%d D%d b%d r%d o%d", TH, V, D, B, regs_of(fn), occ_of(fn, TH, 0));  \
    const unsigned g = grid_rows(B);                                                                        \
    run(nm, [&] { fn<<<g, TH, 0, st>>>(dW, dx, dy, N, K); });                                              \
  }
  ROWS(256, 2, 4, 2);
  ROWS(256, 2, 8, 2);
  ROWS(256, 2, 8, 1);
  ROWS(256, 2, 4, 4);
  ROWS(512, 1, 8, 1);
  ROWS(512, 1, 4, 2);
  ROWS(128, 4, 4, 4);
  ROWS(256, 7, 2, 2);
  ROWS(256, 8, 2, 2);
  ROWS(512, 4, 2, 2);
  ROWS(512, 4, 3, 1);
#define BULK(TH, V, NS, RS, B)                                                                              \
  if (kvec <= TH * V) {                                                                                     \
    auto* fn = bwprof_gemv_bulk<__half, TH, V, NS>;                                                         \
    const size_t smem = (size_t)NS * RS * K * 2;                                                            \
    if (smem <= 200 * 1024) {                                                                               \
      CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));                 \
      char nm[80];                                                                                          \
      snprintf(nm, sizeof nm, "bulk TH%d V%d NS%d RS%d b%d r%d o%d", TH, V, NS, RS, B, regs_of(fn),         \
               occ_of(fn, TH, smem));                                                                       \
      const unsigned g = grid_rows(B);                                                                      \
      run(nm, [&] { fn<<<g, TH, smem, st>>>(dW, dx, dy, N, K, RS); });                                      \
    }                                                                                                       \
  }
  BULK(256, 2, 8, 2, 1);
  BULK(256, 2, 12, 1, 1);
  BULK(256, 2, 4, 2, 2);
  BULK(512, 1, 8, 2, 1);
  BULK(256, 2, 6, 1, 2);
  BULK(256, 7, 4, 1, 1);
  BULK(512, 4, 6, 1, 1);
  BULK(256, 8, 3, 1, 2);
  }
  CK(cudaFree(dW));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  CK(cudaFree(sink));
}

// ---------------------------------------------------------------- Q4_0 ------------------------
static void q4_case(Timer& tm, int M, int N, int K, bool timed) {
  std::mt19937 rng(M * 7 + N * 31 + K);
  std::uniform_real_distribution<float> U(-1, 1);
  const int nb = K / 32, tiles = (N + 15) / 16;
  std::vector<unsigned char> blocks((size_t)N * nb * 18);
  for (size_t b = 0; b < (size_t)N * nb; ++b) {
    unsigned short d = f2h(0.02f + 0.1f * std::fabs(U(rng)));
    std::memcpy(&blocks[b * 18], &d, 2);
    for (int i = 0; i < 16; ++i) blocks[b * 18 + 2 + i] = rng() & 0xff;
  }
  std::vector<unsigned short> x((size_t)M * K), y((size_t)M * N);
  for (auto& v : x) v = f2h(U(rng));
  std::vector<unsigned> fq(q4_frag_quant_bytes(N, K) / 4);
  std::vector<unsigned short> fs(q4_frag_scale_bytes(N, K) / 2);
  q4_frag_pack(blocks.data(), N, K, 0, tiles, reinterpret_cast<std::uint8_t*>(fq.data()),
               reinterpret_cast<std::uint8_t*>(fs.data()));
  std::vector<int> rows;
  for (int n = 0; n < N; n += std::max(1, N / 200)) rows.push_back(n);
  rows.push_back(N - 1);
  std::vector<size_t> yidx;
  std::vector<double> gold;
  for (int m = 0; m < M; ++m)
    for (int n : rows) {
      double a = 0;
      for (int blk = 0; blk < nb; ++blk) {
        const unsigned char* p = &blocks[((size_t)n * nb + blk) * 18];
        unsigned short dh;
        std::memcpy(&dh, p, 2);
        const double d = h2f(dh);
        for (int e = 0; e < 32; ++e) {
          const int qv = e < 16 ? p[2 + e] & 15 : p[2 + e - 16] >> 4;
          a += d * (qv - 8) * h2f(x[(size_t)m * K + blk * 32 + e]);
        }
      }
      gold.push_back(a);
      yidx.push_back((size_t)m * N + n);
    }
  uint4* dfq;
  uint2* dfs;
  __half *dx, *dy;
  CK(cudaMalloc(&dfq, fq.size() * 4));
  CK(cudaMalloc(&dfs, fs.size() * 2));
  CK(cudaMalloc(&dx, x.size() * 2));
  CK(cudaMalloc(&dy, y.size() * 2));
  CK(cudaMemcpy(dfq, fq.data(), fq.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dfs, fs.data(), fs.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  const double bytes = (double)N * nb * 18 + (double)M * K * 2 + (double)M * N * 2;
  cudaStream_t st = tm.st;
  auto run = [&](const std::string& name, const std::function<void()>& launch) {
    CK(cudaMemsetAsync(dy, 0xff, y.size() * 2, st));
    launch();
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    CK(cudaMemcpy(y.data(), dy, y.size() * 2, cudaMemcpyDeviceToHost));
    const double err = rel_err(y, gold, yidx);
    if (!timed || g_ncu) {
      printf("Q4 M=%d %5dx%-5d %-34s check err %.1e%s\n", M, N, K, name.c_str(), err, err < 4e-3 ? "" : " WRONG");
      return;
    }
    auto [med, mn] = tm.time(launch);
    printf("Q4 M=%d %5dx%-5d %-34s %7.2f us (min %6.2f) %6.3f TB/s err %.1e%s\n", M, N, K, name.c_str(), med, mn,
           bytes / med / 1e6, err, err < 4e-3 ? "" : " WRONG");
  };
  run("lib mma W8 U4", [&] { bwprof_q4_0_matmul_mma<8, 4, false><<<tiles, 256, 0, st>>>(dfq, dfs, dx, dy, M, N, K); });
#define SPLIT(W, UU, C)                                                                                        \
  do {                                                                                                       \
    auto* fn = bwprof_q4_0_matmul_split<W, UU, C>;                                                           \
    char nm[80];                                                                                             \
    snprintf(nm, sizeof nm, "split W%d U%d C%d r%d o%d", W, UU, C, regs_of(fn), occ_of(fn, W * 32, 0));      \
    run(nm, [&] { fn<<<tiles * C, W * 32, 0, st>>>(dfq, dfs, dx, dy, M, N, K); });                           \
  } while (0)
#define RING(W, UU, XS)                                                                                        \
  do {                                                                                                       \
    auto* fn = bwprof_q4_0_matmul_ring<W, UU, XS>;                                                           \
    const size_t smem = XS ? q4_x_smem_bytes(M, K) : 0;                                                      \
    if (smem > 48 * 1024) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)); \
    char nm[80];                                                                                             \
    snprintf(nm, sizeof nm, "ring W%d U%d%s r%d o%d", W, UU, XS ? " xs" : " xr", regs_of(fn), occ_of(fn, W * 32, smem)); \
    run(nm, [&] { fn<<<tiles, W * 32, smem, st>>>(dfq, dfs, dx, dy, M, N, K); });                            \
  } while (0)
#define IPIPE(W, UU, B)                                                                                       \
  do {                                                                                                       \
    auto* fn = bwprof_q4_0_matmul_ipipe<W, UU>;                                                              \
    const int occ = std::max(1, occ_of(fn, W * 32, 0));                                                      \
    const int k = (tiles + g_sms * std::min(B, occ) - 1) / (g_sms * std::min(B, occ));                       \
    const unsigned g = (unsigned)((tiles + k - 1) / k);                                                      \
    const size_t smem = q4_part_bytes(W, k);                                                                 \
    if (smem > 48 * 1024) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)); \
    char nm[80];                                                                                             \
    snprintf(nm, sizeof nm, "ipipe W%d U%d b%d g%u r%d o%d", W, UU, B, g, regs_of(fn), occ);                \
    run(nm, [&] { fn<<<g, W * 32, smem, st>>>(dfq, dfs, dx, dy, M, N, K); });                                \
  } while (0)
  const bool xs_fits = q4_x_smem_bytes(M, K) <= 100 * 1024;
  RING(8, 4, false);
  if (xs_fits) {
    RING(8, 4, true);
    RING(8, 2, true);
    RING(8, 6, true);
    RING(8, 8, true);
    RING(4, 8, true);
    RING(16, 4, true);
    RING(4, 4, true);
  }
  RING(8, 2, false);
  RING(4, 4, false);
  IPIPE(8, 4, 3);
  IPIPE(8, 4, 2);
  IPIPE(8, 6, 2);
  IPIPE(16, 4, 1);
  IPIPE(4, 4, 6);
  if (g_persistent) {
  SPLIT(8, 4, 2);
  SPLIT(8, 2, 4);
  SPLIT(4, 4, 2);
  // grid: B blocks per SM, at most one block per tile
  auto grid_for_tiles = [&](int b) { return (unsigned)std::max(1, std::min(tiles, g_sms * b)); };
#define PIPE(W, UU, XR, B)                                                                                    \
  do {                                                                                                       \
    auto* fn = bwprof_q4_0_matmul_pipe<W, UU, XR>;                                                           \
    const unsigned g = grid_for_tiles(B);                                                                    \
    const size_t smem = q4_part_bytes(W, (tiles + g - 1) / g);                                               \
    if (smem > 48 * 1024) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)); \
    char nm[80];                                                                                             \
    snprintf(nm, sizeof nm, "pipe W%d U%d%s b%d r%d o%d", W, UU, XR ? " xr" : " xj", B, regs_of(fn),         \
             occ_of(fn, W * 32, smem));                                                                      \
    run(nm, [&] { fn<<<g, W * 32, smem, st>>>(dfq, dfs, dx, dy, M, N, K); });                                \
  } while (0)
  PIPE(8, 4, true, 2);
  PIPE(8, 6, true, 2);
  PIPE(8, 8, true, 1);
  PIPE(16, 4, true, 1);
  PIPE(16, 6, false, 1);
  PIPE(8, 8, false, 2);
  PIPE(4, 8, true, 4);
#define BULKQ(W, S, NS, B)                                                                                    \
  do {                                                                                                       \
    auto* fn = bwprof_q4_0_matmul_bulk<W, S, NS>;                                                            \
    const unsigned g = grid_for_tiles(B);                                                                    \
    const size_t smem = (size_t)NS * S * 576 + q4_part_bytes(W, (tiles + g - 1) / g);                        \
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));                    \
    char nm[80];                                                                                             \
    snprintf(nm, sizeof nm, "bulk W%d S%d NS%d b%d r%d o%d", W, S, NS, B, regs_of(fn), occ_of(fn, W * 32, smem)); \
    run(nm, [&] { fn<<<g, W * 32, smem, st>>>(dfq, dfs, dx, dy, M, N, K); });                                \
  } while (0)
  BULKQ(8, 16, 8, 1);
  BULKQ(8, 16, 12, 1);
  BULKQ(8, 32, 6, 1);
  BULKQ(16, 32, 6, 1);
  BULKQ(8, 16, 6, 2);
  BULKQ(4, 16, 6, 2);
  BULKQ(16, 16, 10, 1);
  }
  CK(cudaFree(dfq));
  CK(cudaFree(dfs));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
}

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
  g_persistent = what == "persistent";
  g_ncu = what == "ncu";
  if (g_ncu) g_reps = 1;
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs, L2 %d MB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
  Timer tm;
  if (g_ncu) {  // one timed launch each of the empty kernel, the pure read, the GEMV and the Q4_0 kernels
    gemv_case(tm, 4096, 4096, true);
    q4_case(tm, 1, 14336, 4096, true);
    return 0;
  }
  if (what == "all" || what == "q4" || g_persistent) {
    // odd shapes first: padding rows, K not a multiple of 64, more warps than chunks, one tile
    q4_case(tm, 1, 1001, 4096, false);
    q4_case(tm, 5, 77, 160, false);
    q4_case(tm, 8, 130, 96, false);
    q4_case(tm, 8, 33, 64, false);
    q4_case(tm, 3, 16, 32, false);
    q4_case(tm, 1, 5000, 32, false);
    q4_case(tm, 2, 40, 4128, false);
    q4_case(tm, 1, 14336, 4096, true);
    q4_case(tm, 1, 4096, 14336, true);
    q4_case(tm, 8, 14336, 4096, true);
  }
  if (what == "all" || what == "gemv" || g_persistent) {
    gemv_case(tm, 130, 128, false);
    gemv_case(tm, 77, 1000, false);
    gemv_case(tm, 9000, 64, false);
    gemv_case(tm, 4096, 4096, true);
    gemv_case(tm, 14336, 4096, true);
    gemv_case(tm, 4096, 14336, true);
  }
  return 0;
}
