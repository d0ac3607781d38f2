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

// Tolerance of the normwise error (max |out - gold| / max |gold|) for an output stored in `dtype`,
// `reduction` the length of the longest sum behind one output element.
//   FP16 (unit roundoff u = 2^-11): 4e-3, about 8u, whatever the length (as measured since FP16 came).
//   BF16 (u = 2^-8): 4u for the output's own rounding and up to three intermediate ones (a stored
//   bias sum, an activation), plus u sqrt(n) / 16 for a sum of n terms that a kernel rounds to BF16
//   on the way (attention's probabilities before P.V, the matrix units' operands): rounding errors
//   of random sign grow like sqrt(n) u times a term, and a term is at most about 1/16 of the largest
//   output at the sizes the checks use. 4K keys: 8u = 3.1e-2; a single rounding: 4u = 1.6e-2.
//   FP32: the family's own `fp32_tol` (its accumulation order).
inline double tolerance_for(DType t, double fp32_tol = 1e-5, std::int64_t reduction = 1) {
  constexpr double kBf16Unit = 1.0 / 256;
  switch (t) {
    case DType::kF16: return 4e-3;
    case DType::kBF16: return kBf16Unit * (4.0 + std::sqrt(double(reduction > 1 ? reduction : 1)) / 16.0);
    default: return fp32_tol;
  }
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
    case Act::kGelu: return 0.5 * x * std::erfc(-x * 0.70710678118654752440);  // as act_f: no cancellation
    case Act::kSilu: return x / (1.0 + std::exp(-x));
    default: return x;
  }
}
inline float act_f(Act a, float x) {
  switch (a) {
    case Act::kRelu: return x > 0.f ? x : 0.f;
    // x * Phi(x) through erfc: 1 + erf(x / sqrt 2) cancels to nothing below x = -5 in FP32 and
    // below x = -8 in FP64 (a single-output GEMM with GELU came out 0, or the gold did).
    case Act::kGelu: return 0.5f * x * std::erfc(-x * 0.70710678f);
    case Act::kSilu: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

}  // namespace bwprof
