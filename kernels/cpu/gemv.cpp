// GEMV y = W.x on the CPU (the M = 1 product a decode step runs), FP32 accumulation.
#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

namespace bwprof {

namespace {
BufferList buffers(const GemvData& d) {
  BufferList l;
  add_buffer(l, d.W);
  add_buffer(l, d.x);
  add_buffer(l, d.y);
  return l;
}
}  // namespace

GemvData make_gemv_data(const Problem& p) {
  const std::size_t N = p.i("N"), K = p.i("K");
  ensure_host_memory(double(N * K + N + K) * dtype_size(p.dtype), "GEMV operands");
  GemvData d;
  d.W = HostTensor(p.dtype, N * K, "GEMV W");
  d.x = HostTensor(p.dtype, K, "GEMV x");
  d.y = HostTensor(p.dtype, N, "GEMV y");
  d.W.fill_random(81);
  d.x.fill_random(82);
  d.y.fill(0.0f);
  return d;
}

void gemv_cpu(GemvData& d, const Problem& p) {
  const std::int64_t K = p.i("K");
  std::vector<float> x(K);
  for (std::int64_t k = 0; k < K; ++k) x[k] = d.x.get(k);
  parallel_for(p.i("N"), 16, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t n = lo; n < hi; ++n) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::int64_t k = 0;
      for (; k + 8 <= K; k += 8)
        for (int j = 0; j < 8; ++j) acc[j] += d.W.get(n * K + k + j) * x[k + j];
      float s = 0;
      for (; k < K; ++k) s += d.W.get(n * K + k) * x[k];
      for (float a : acc) s += a;
      d.y.set(n, s);
    }
  });
}

Check gemv_check(const GemvData& d, const Problem& p) {
  const std::int64_t K = p.i("K");
  ErrorMeter m;
  for (std::int64_t n : sample_indices(p.i("N"), 512)) {
    double acc = 0;
    for (std::int64_t k = 0; k < K; ++k) acc += double(d.W.get(n * K + k)) * d.x.get(k);
    m.add(d.y.get(n), acc);
  }
  return m.finish(tolerance_for(p.dtype, 1e-4));
}

std::unique_ptr<KernelInstance> make_gemv_cpu(Backend&, const Problem& p) {
  if (p.i("rotate") != 1)
    BWPROF_INVALID("rotate: GPU only (the CPU's cold mode evicts W itself; leave rotate at 1)");
  return make_cpu_kernel(p, make_gemv_data(p), gemv_cpu, gemv_check, buffers);
}

}  // namespace bwprof
