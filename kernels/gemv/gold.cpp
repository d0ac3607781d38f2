// GEMV operands and the float64 gold.
#include "gemv/gemv.hpp"

namespace bwprof {

GemvData make_gemv_data(const Problem& p) {
  const std::size_t N = p.i("N"), K = p.i("K");
  GemvData d;
  d.W = HostTensor(p.dtype, N * K, "GEMV W");
  d.x = HostTensor(p.dtype, K, "GEMV x");
  d.y = HostTensor(p.dtype, N, "GEMV y");
  d.W.fill_random(81);
  d.x.fill_random(82);
  d.y.fill(0.0f);
  return d;
}

Check gemv_check(const GemvData& d, const Problem& p) {
  const std::int64_t K = p.i("K");
  ErrorMeter m;
  for (std::int64_t n : sample_indices(p.i("N"), 512)) {
    double acc = 0;
    for (std::int64_t k = 0; k < K; ++k) acc += double(d.W.get(n * K + k)) * d.x.get(k);
    m.add(d.y.get(n), acc);
  }
  return m.finish(tolerance_for(p.dtype, 1e-4, p.i("K")));
}

}  // namespace bwprof
