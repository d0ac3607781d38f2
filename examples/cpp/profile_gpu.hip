// Profiling one's own GPU kernel with the installed bwprof. The kernel is written once in HIP;
// bwprof/gpu_runtime.hpp maps the HIP names onto CUDA under nvcc. scale: y = a * x, reading x once
// and writing y once (8 bytes and 1 FLOP per element).
#include <bwprof/gpu_runtime.hpp>
#include <bwprof/profiler.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void my_scale(const float* __restrict__ x, float* __restrict__ y, float a, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i];
}

namespace {
int run(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 26);
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = 0.25f * float(i % 1021) - 3.0f;
  float *x = nullptr, *y = nullptr;
  BWPROF_GPU_CHECK(hipMalloc(&x, n * sizeof(float)));
  BWPROF_GPU_CHECK(hipMalloc(&y, n * sizeof(float)));
  BWPROF_GPU_CHECK(hipMemcpy(x, host.data(), n * sizeof(float), hipMemcpyHostToDevice));

  bwprof::Profiler prof("my_scale", "gpu");
  prof.set_bytes(1.0 * n * sizeof(float), 1.0 * n * sizeof(float)).set_flops(1.0 * n);
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 132 * 16));
  // The callable launches on the stream it is given: there the L2 is flushed and the time taken.
  const bwprof::Measurement m = prof.measure([&](bwprof::Stream s) {
    my_scale<<<blocks, 256, 0, s.as<hipStream_t>()>>>(x, y, 2.0f, n);
  });
  std::printf("%s on %s: %.2f us median over %d runs, %.1f GB/s (%.0f %% of the measured peak), %s-bound\n  %s\n",
              m.kernel.c_str(), m.device_name.c_str(), m.time_us.median, m.time_us.count, m.bandwidth_gbs,
              m.bandwidth_pct_peak, m.bound.c_str(), m.bottleneck.c_str());

  // The single-shot form on a stream of one's own.
  hipStream_t mine = nullptr;
  BWPROF_GPU_CHECK(hipStreamCreateWithFlags(&mine, hipStreamNonBlocking));
  prof.start(bwprof::Stream{mine});
  my_scale<<<blocks, 256, 0, mine>>>(x, y, 2.0f, n);
  const bwprof::Measurement once = prof.stop();
  std::printf("single shot on my stream: %.2f us, %.1f GB/s\n", once.time_us.median, once.bandwidth_gbs);

  std::vector<float> out(n);
  BWPROF_GPU_CHECK(hipMemcpy(out.data(), y, n * sizeof(float), hipMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += out[i] != 2.0f * host[i];
  BWPROF_GPU_CHECK(hipStreamDestroy(mine));
  BWPROF_GPU_CHECK(hipFree(x));
  BWPROF_GPU_CHECK(hipFree(y));
  const double expect = (m.bytes_read + m.bytes_written) / (m.time_us.median * 1e-6) / 1e9;
  if (bad || !(std::fabs(m.bandwidth_gbs - expect) <= 1e-9 * expect)) {
    std::printf("FAIL: %zu wrong elements; bandwidth_gbs %.6g vs bytes / median time %.6g\n", bad, m.bandwidth_gbs, expect);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // bwprof's errors say what failed (an absent device, a bad count)
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
