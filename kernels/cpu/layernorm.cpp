// Layer norm over rows on the CPU, FP32 statistics.
#include <cmath>

#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

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

LayerNormData make_layernorm_data(const Problem& p) {
  const std::size_t R = p.i("rows"), C = p.i("cols");
  ensure_host_memory(double(2 * R * C + 2 * C) * dtype_size(p.dtype), "layer norm tensors");
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

void layernorm_cpu(LayerNormData& d, const Problem& p) {
  const std::int64_t R = p.i("rows"), C = p.i("cols");
  parallel_for(R, 1, [&](std::size_t lo, std::size_t hi) {
    std::vector<float> row(C), w(C), b(C);
    for (std::int64_t c = 0; c < C; ++c) {
      w[c] = d.weight.get(c);
      b[c] = d.bias.get(c);
    }
    for (std::size_t r = lo; r < hi; ++r) {
      float sum = 0;
      for (std::int64_t c = 0; c < C; ++c) sum += (row[c] = d.x.get(r * C + c));
      const float mean = sum / C;
      float var = 0;
      for (std::int64_t c = 0; c < C; ++c) var += (row[c] - mean) * (row[c] - mean);
      const float rstd = 1.0f / std::sqrt(var / C + kLayerNormEps);
      for (std::int64_t c = 0; c < C; ++c) d.y.set(r * C + c, (row[c] - mean) * rstd * w[c] + b[c]);
    }
  });
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
  return m.finish(tolerance_for(p.dtype, 1e-4));
}

std::unique_ptr<KernelInstance> make_layernorm_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_layernorm_data(p), layernorm_cpu, layernorm_check, buffers);
}

}  // namespace bwprof
