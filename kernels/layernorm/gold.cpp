// Layer-norm tensors and the float64 gold.
#include <cmath>

#include "layernorm/layernorm.hpp"

namespace bwprof {

LayerNormData make_layernorm_data(const Problem& p) {
  const std::size_t R = p.i("rows"), C = p.i("cols");
  LayerNormData d;
  d.x = HostTensor(p.dtype, R * C, "layer norm x");
  d.weight = HostTensor(p.dtype, C, "layer norm weight");
  d.bias = HostTensor(p.dtype, C, "layer norm bias");
  d.y = HostTensor(p.dtype, R * C, "layer norm y");
  d.x.fill_random(61, -2.0f, 3.0f);  // a non-zero mean exercises the centring
  d.weight.fill_random(62, 0.5f, 1.5f);
  d.bias.fill_random(63);
  d.y.fill(0.0f);
  return d;
}

Check layernorm_check(const LayerNormData& d, const Problem& p) {
  const std::int64_t C = p.i("cols");
  ErrorMeter m;
  for (std::int64_t r : sample_indices(p.i("rows"), 64)) {
    double sum = 0, sq = 0;
    for (std::int64_t c = 0; c < C; ++c) sum += d.x.get(r * C + c);
    const double mean = sum / C;
    for (std::int64_t c = 0; c < C; ++c) sq += (d.x.get(r * C + c) - mean) * (d.x.get(r * C + c) - mean);
    const double rstd = 1.0 / std::sqrt(sq / C + kLayerNormEps);
    for (std::int64_t c = 0; c < C; ++c)
      m.add(d.y.get(r * C + c), (d.x.get(r * C + c) - mean) * rstd * d.weight.get(c) + d.bias.get(c));
  }
  // The statistics are FP32 in every kernel: a BF16 output is rounded once (no sum of BF16 terms).
  return m.finish(tolerance_for(p.dtype, 1e-4));
}

}  // namespace bwprof
