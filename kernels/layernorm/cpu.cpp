// Layer norm over rows on the CPU, FP32 statistics.
#include <algorithm>
#include <cmath>
#include <vector>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "layernorm/layernorm.hpp"

namespace bwprof {

namespace {
BufferList buffers(const LayerNormData& d) {
  BufferList l;
  add_buffer(l, d.x);
  add_buffer(l, d.weight);
  add_buffer(l, d.bias);
  add_buffer(l, d.y);
  return l;
}
}  // namespace

void layernorm_cpu(LayerNormData& d, const Problem& p) {
  const std::int64_t R = p.i("rows"), C = p.i("cols");
  parallel_for(R, 1, [&](std::size_t lo, std::size_t hi) {
    std::vector<float> row(C), w(C), b(C);
    for (std::int64_t c = 0; c < C; ++c) {
      w[c] = d.weight.get(c);
      b[c] = d.bias.get(c);
    }
    // Sums in blocks of kBlock, then the blocks' sums: a running FP32 sum over a row of a million
    // drifts past the FP32 tolerance (1e-4 at 887479 columns); blocked, the error grows with the
    // block and the number of blocks, not the row.
    constexpr std::int64_t kBlock = 1024;
    auto blocked_sum = [&](auto term) {
      float total = 0;
      for (std::int64_t c0 = 0; c0 < C; c0 += kBlock) {
        float part = 0;
        for (std::int64_t c = c0; c < std::min(C, c0 + kBlock); ++c) part += term(c);
        total += part;
      }
      return total;
    };
    for (std::size_t r = lo; r < hi; ++r) {
      for (std::int64_t c = 0; c < C; ++c) row[c] = d.x.get(r * C + c);
      const float mean = blocked_sum([&](std::int64_t c) { return row[c]; }) / C;
      const float var = blocked_sum([&](std::int64_t c) { return (row[c] - mean) * (row[c] - mean); });
      const float rstd = 1.0f / std::sqrt(var / C + kLayerNormEps);
      for (std::int64_t c = 0; c < C; ++c) d.y.set(r * C + c, (row[c] - mean) * rstd * w[c] + b[c]);
    }
  });
}

std::unique_ptr<KernelInstance> make_layernorm_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_layernorm_data(p), layernorm_cpu, layernorm_check, buffers);
}

}  // namespace bwprof
