#include <algorithm>
#include <cstring>

#include "bwprof/error.hpp"
#include "common/reference.hpp"
#include "bwprof/parallel.hpp"

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

void fill_random_bytes(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
  // Each 8-byte word from its index alone, so the bytes do not depend on how the work is split.
  parallel_for(n / 8, 1 << 16, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::uint64_t z = seed * 0x2545f4914f6cdd1dull + (i + 1) * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      std::memcpy(p + 8 * i, &z, 8);
    }
  });
  for (std::size_t i = n / 8 * 8; i < n; ++i) p[i] = static_cast<std::uint8_t>(0xa5 ^ (i * 131 + seed));
}

Check bytes_check(const std::uint8_t* got, const std::uint8_t* want, std::size_t n, std::uint8_t value) {
  std::size_t bad = 0;
  if (want) {
    if (std::memcmp(got, want, n) != 0)
      for (std::size_t i = 0; i < n; ++i) bad += got[i] != want[i];
  } else {
    for (std::size_t i = 0; i < n; ++i) bad += got[i] != value;
  }
  Check c;
  c.tolerance = 0;
  c.max_rel_error = n ? static_cast<double>(bad) / static_cast<double>(n) : 0;
  c.ok = bad == 0;
  return c;
}

}  // namespace bwprof
