// Experiment: which copy kernel shape reaches the most bandwidth on this GPU (L2 flushed before
// each run, events around the kernel, median of 30). Standalone so it builds in seconds:
//   nvcc -O3 -arch=sm_90 -o /tmp/copy_variants benchmarks/experiments/copy_variants.cu && /tmp/copy_variants
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

template <int U, bool HINT>
__global__ void grid_stride(const uint4* __restrict__ a, uint4* __restrict__ c, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t base = blockIdx.x * (size_t)blockDim.x + threadIdx.x; base < n; base += stride * U) {
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) if (base + u * stride < n) r[u] = HINT ? __ldcs(a + base + u * stride) : a[base + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) if (base + u * stride < n) { if (HINT) __stcs(c + base + u * stride, r[u]); else c[base + u * stride] = r[u]; }
  }
}

template <int U, bool HINT>
__global__ void one_shot(const uint4* __restrict__ a, uint4* __restrict__ c, size_t n) {
  size_t base = (size_t)blockIdx.x * blockDim.x * U + threadIdx.x;
  uint4 r[U];
#pragma unroll
  for (int u = 0; u < U; ++u) if (base + u * blockDim.x < n) r[u] = HINT ? __ldcs(a + base + u * blockDim.x) : a[base + u * blockDim.x];
#pragma unroll
  for (int u = 0; u < U; ++u) if (base + u * blockDim.x < n) { if (HINT) __stcs(c + base + u * blockDim.x, r[u]); else c[base + u * blockDim.x] = r[u]; }
}

int main() {
  const size_t bytes = size_t(1) << 30, n = bytes / 16;
  uint4 *a, *c;
  char* scrub;
  int sms = 0, l2 = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&c, bytes));
  CK(cudaMalloc(&scrub, 2 * (size_t)l2));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  auto run = [&](const char* name, auto launch) {
    std::vector<float> t;
    for (int i = 0; i < 33; ++i) {
      cudaMemsetAsync(scrub, i, 2 * (size_t)l2);
      cudaEventRecord(s);
      launch();
      cudaEventRecord(e);
      cudaEventSynchronize(e);
      float ms;
      cudaEventElapsedTime(&ms, s, e);
      if (i >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    printf("%-36s %.3f TB/s\n", name, 2.0 * bytes / (t[t.size() / 2] * 1e-3) / 1e12);
  };
  for (int waves : {4, 8, 16}) {
    unsigned g = sms * waves;
    char name[64];
    snprintf(name, sizeof name, "grid-stride U4 waves=%d", waves);
    run(name, [&] { grid_stride<4, false><<<g, 256>>>(a, c, n); });
    snprintf(name, sizeof name, "grid-stride U4 cs-hints waves=%d", waves);
    run(name, [&] { grid_stride<4, true><<<g, 256>>>(a, c, n); });
    snprintf(name, sizeof name, "grid-stride U8 waves=%d", waves);
    run(name, [&] { grid_stride<8, false><<<g, 256>>>(a, c, n); });
  }
  run("one-shot U4", [&] { one_shot<4, false><<<(n + 1023) / 1024, 256>>>(a, c, n); });
  run("one-shot U4 cs-hints", [&] { one_shot<4, true><<<(n + 1023) / 1024, 256>>>(a, c, n); });
  run("one-shot U8", [&] { one_shot<8, false><<<(n + 2047) / 2048, 256>>>(a, c, n); });
  run("one-shot U2", [&] { one_shot<2, false><<<(n + 511) / 512, 256>>>(a, c, n); });
  run("cudaMemcpyAsync D2D", [&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); });
  CK(cudaGetLastError());
  return 0;
}
