// GEMV y = W.x on the CPU (the M = 1 product a decode step runs), FP32 accumulation.
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "gemv/gemv.hpp"

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

std::unique_ptr<KernelInstance> make_gemv_cpu(Backend&, const Problem& p) {
  if (p.i("rotate") != 1)
    BWPROF_INVALID("rotate: GPU only (the CPU's cold mode evicts W itself; leave rotate at 1)");
  return make_cpu_kernel(p, make_gemv_data(p), gemv_cpu, gemv_check, buffers);
}

}  // namespace bwprof
