// The GPU chains' gold: each FMA emulated in double, where it is exact for these operands (a 16-bit
// type's product has at most 22 significant bits, and the addend sits within 31 bits of it), then
// rounded once to the chain's type, so the host repeats the GPU's roundings one for one.
#include <cmath>
#include <string>

#include "bwprof/error.hpp"
#include "fma_chain/fma_chain.hpp"

namespace bwprof {

namespace {

// Round to nearest even with `bits` significand bits, exponents below `min_exp` (frexp's) kept as
// the subnormals of the type: FP16 has 11 bits and -13, BF16 8 bits and -125.
double round_to(double x, int bits, int min_exp) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  if (e < min_exp) e = min_exp;
  const double scale = std::ldexp(1.0, bits - e);
  return std::nearbyint(x * scale) / scale;
}

}  // namespace

std::string fma_chain_arithmetic(const Problem& p) {
  if (p.s("math") == "fp64") return "fp64";
  return p.variant == "cpu" ? "fp32" : to_string(p.dtype);
}

double fma_chain_gpu_gold(const std::string& arithmetic, int thread, float a, float b) {
  const int bits = arithmetic == "fp16" ? 11 : arithmetic == "bf16" ? 8 : 0;
  const int min_exp = arithmetic == "fp16" ? -13 : -125;
  if (arithmetic == "fp64") {
    double s = 0;
    for (int c = 0; c < kFmaGpuChains; ++c) {
      double v = thread * (1.0 / 1024) + c;
      for (int i = 0; i < kFmaGpuIters; ++i) v = std::fma(v, static_cast<double>(a), static_cast<double>(b));
      s += v;
    }
    return static_cast<float>(s);
  }
  if (arithmetic == "fp32") {
    float s = 0;
    for (int c = 0; c < kFmaGpuChains; ++c) {
      float v = thread * (1.0f / 1024) + c;
      for (int i = 0; i < kFmaGpuIters; ++i) v = std::fma(v, a, b);
      s += v;
    }
    return s;
  }
  if (bits == 0) throw Error("internal: no FMA chain of arithmetic '" + arithmetic + "'");
  const double ha = round_to(a, bits, min_exp), hb = round_to(b, bits, min_exp);
  float s = 0;
  for (int c = 0; c < kFmaGpuChains; ++c) {
    double v = round_to(thread * (1.0f / 1024) + c, bits, min_exp);
    for (int i = 0; i < kFmaGpuIters; ++i) v = round_to(v * ha + hb, bits, min_exp);
    const float lane = static_cast<float>(v);  // both halves of the pair hold the same chain
    s += lane + lane;
  }
  return s;
}

}  // namespace bwprof
