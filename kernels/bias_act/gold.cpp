// Bias + activation tensors and the float64 gold.
#include "bias_act/bias_act.hpp"

namespace bwprof {

BiasActData make_bias_act_data(const Problem& p) {
  const std::size_t R = p.i("rows"), C = p.i("cols");
  BiasActData d;
  d.x = HostTensor(p.dtype, R * C, "x");
  d.bias = HostTensor(p.dtype, C, "bias");
  d.y = HostTensor(p.dtype, R * C, "y");
  d.x.fill_random(71, -3.0f, 3.0f);
  d.bias.fill_random(72);
  d.y.fill(0.0f);
  return d;
}

Check bias_act_check(const BiasActData& d, const Problem& p) {
  const std::int64_t C = p.i("cols");
  const Act act = parse_act(p.s("act"));
  ErrorMeter m;
  for (std::int64_t r : sample_indices(p.i("rows"), 64))
    for (std::int64_t c = 0; c < C; ++c)
      m.add(d.y.get(r * C + c), act_gold(act, double(d.x.get(r * C + c)) + d.bias.get(c)));
  return m.finish(tolerance_for(p.dtype, 1e-5));
}

}  // namespace bwprof
