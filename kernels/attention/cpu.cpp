// Attention softmax(Q.K^T / sqrt(d)).V on the CPU, one query row per task, FP32 accumulation.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/attention.hpp"
#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"

namespace bwprof {

namespace {

BufferList buffers(const AttentionData& d) {
  BufferList l;
  add_buffer(l, d.Q);
  add_buffer(l, d.K);
  add_buffer(l, d.V);
  add_buffer(l, d.O);
  return l;
}

}  // namespace

void attention_cpu(AttentionData& d, const Problem& p) {
  const AttentionDims a(p);
  const std::int64_t group = a.H / a.Hkv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.D));
  const std::size_t rows = a.B * a.H * a.Sq;
  parallel_for(rows, 1, [&](std::size_t lo, std::size_t hi) {
    std::vector<float> q(a.D), s(a.Skv), o(a.D);
    for (std::size_t r = lo; r < hi; ++r) {
      const std::int64_t i = r % a.Sq, h = (r / a.Sq) % a.H, b = r / (a.Sq * a.H);
      const std::int64_t kvh = h / group;
      for (std::int64_t x = 0; x < a.D; ++x) q[x] = d.Q.get(r * a.D + x) * scale;
      const std::int64_t n = visible_keys(a, i);
      float mx = -INFINITY;
      for (std::int64_t j = 0; j < n; ++j) {
        float acc = 0;
        const std::size_t kr = attention_kv_offset(d, a, b, kvh, j);
        for (std::int64_t x = 0; x < a.D; ++x) acc += q[x] * d.K.get(kr + x);
        s[j] = acc;
        mx = std::max(mx, acc);
      }
      float denom = 0;
      for (std::int64_t j = 0; j < n; ++j) denom += (s[j] = std::exp(s[j] - mx));
      std::fill(o.begin(), o.end(), 0.0f);
      for (std::int64_t j = 0; j < n; ++j) {
        const float w = s[j];
        const std::size_t vr = attention_kv_offset(d, a, b, kvh, j);
        for (std::int64_t x = 0; x < a.D; ++x) o[x] += w * d.V.get(vr + x);
      }
      for (std::int64_t x = 0; x < a.D; ++x) d.O.set(r * a.D + x, o[x] / denom);
    }
  });
}

std::unique_ptr<KernelInstance> make_attention_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_attention_data(p), attention_cpu, attention_check, buffers);
}

}  // namespace bwprof
