#include <algorithm>

#include "bwprof/error.hpp"
#include "common/reference.hpp"

namespace bwprof {

std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t max) {
  std::vector<std::int64_t> out;
  if (n <= 0) return out;
  if (n <= max) {
    for (std::int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (std::int64_t k = 0; k < max; ++k) out.push_back(k * (n - 1) / (max - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Check ErrorMeter::finish(double tolerance) const {
  Check c;
  c.tolerance = tolerance;
  c.max_rel_error = max_gold_ > 0 ? max_diff_ / max_gold_ : max_diff_;
  c.ok = c.max_rel_error <= tolerance;
  return c;
}

Act parse_act(const std::string& name) {
  if (name == "none") return Act::kNone;
  if (name == "relu") return Act::kRelu;
  if (name == "gelu") return Act::kGelu;
  if (name == "silu") return Act::kSilu;
  BWPROF_INVALID("act: unknown activation '" + name + "' (choices: none, relu, gelu, silu)");
}

}  // namespace bwprof
