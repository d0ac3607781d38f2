// Host-side helpers every family's float64 reference ("gold") uses: sampled indices, the error
// meter, dtype tolerances and the activations. A GPU variant starts from its family's host data,
// copies its output back into it and calls the same check as the CPU variant.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {


// Up to `max` indices spread evenly over [0, n), always including the first and the last.
std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t max);

// Normwise error: max |out - gold| / max |gold| (or over a caller-given scale).
class ErrorMeter {
 public:
  void add(double out, double gold) {
    double d = std::fabs(out - gold);
    if (!(d <= max_diff_)) max_diff_ = std::isnan(d) ? INFINITY : d;
    double g = std::fabs(gold);
    if (g > max_gold_) max_gold_ = g;
  }
  void add_scale(double s) { if (s > max_gold_) max_gold_ = s; }
  Check finish(double tolerance) const;

 private:
  double max_diff_ = 0, max_gold_ = 0;
};

// Tolerance for an output stored in `dtype`: FP16 storage rounds to 2^-11 relative.
// BF16 keeps 8 bits of mantissa: 2^-8 relative.
inline double tolerance_for(DType t, double fp32_tol = 1e-5) {
  return t == DType::kF16 ? 4e-3 : t == DType::kBF16 ? 3e-2 : fp32_tol;
}

// Random bytes, deterministic for a seed (a copy that moved nothing, or moved zeros, fails).
void fill_random_bytes(std::uint8_t* p, std::size_t n, std::uint64_t seed);
// Every byte of `got` against `want` (or against `value` when `want` is null): a copy is exact, so
// the error is the share of bytes that differ and the tolerance is 0.
Check bytes_check(const std::uint8_t* got, const std::uint8_t* want, std::size_t n, std::uint8_t value = 0);

enum class Act { kNone, kRelu, kGelu, kSilu };
Act parse_act(const std::string& name);
inline double act_gold(Act a, double x) {
  switch (a) {
    case Act::kRelu: return x > 0 ? x : 0;
    case Act::kGelu: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
    case Act::kSilu: return x / (1.0 + std::exp(-x));
    default: return x;
  }
}
inline float act_f(Act a, float x) {
  switch (a) {
    case Act::kRelu: return x > 0.f ? x : 0.f;
    case Act::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
    case Act::kSilu: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

}  // namespace bwprof
