// Intensity-sweep arrays and the float64 gold.
#include "intensity_sweep/intensity_sweep.hpp"

namespace bwprof {

SweepData make_sweep_data(const Problem& p) {
  const std::size_t n = p.i("n");
  SweepData d;
  d.x = HostTensor(p.dtype, n, "sweep x");
  d.y = HostTensor(p.dtype, n, "sweep y");
  d.x.fill_random(91);
  d.y.fill(0.0f);
  return d;
}

Check sweep_check(const SweepData& d, const Problem& p) {
  const std::int64_t fmas = p.i("fmas");
  ErrorMeter m;
  for (std::int64_t i : sample_indices(static_cast<std::int64_t>(d.x.size()), 4096)) {
    double v = d.x.get(i);
    for (std::int64_t k = 0; k < fmas; ++k) v = v * kSweepA + kSweepB;
    m.add(d.y.get(i), v);
  }
  return m.finish(tolerance_for(p.dtype, 1e-5));
}

}  // namespace bwprof
