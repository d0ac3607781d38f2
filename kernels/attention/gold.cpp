// Attention tensors (K/V contiguous, or paged through a shuffled block table) and the float64 gold.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attention/attention.hpp"

namespace bwprof {

AttentionDims::AttentionDims(const Problem& p)
    : B(p.i("batch")), H(p.i("heads")), Hkv(p.i("kv_heads") ? p.i("kv_heads") : p.i("heads")),
      Sq(p.i("seq_q")), Skv(p.i("seq_kv") ? p.i("seq_kv") : p.i("seq_q")), D(p.i("head_dim")),
      causal(p.b("causal")) {}

AttentionData make_attention_data(const Problem& p) {
  AttentionDims a(p);
  AttentionData d;
  std::size_t kv = a.B * a.Hkv * a.Skv * a.D;
  d.paged = p.variant.find("paged") != std::string::npos;
  if (d.paged) {
    d.block_size = p.i("block_size");
    d.blocks_per_seq = (a.Skv + d.block_size - 1) / d.block_size;
    kv = static_cast<std::size_t>(checked_mul(checked_mul(a.B * d.blocks_per_seq, a.Hkv * d.block_size, "KV blocks"),
                                              a.D, "paged K/V size"));
  }
  const std::size_t q = a.B * a.H * a.Sq * a.D;
  d.Q = HostTensor(p.dtype, q, "attention Q");
  d.K = HostTensor(p.dtype, kv, "attention K");
  d.V = HostTensor(p.dtype, kv, "attention V");
  d.O = HostTensor(p.dtype, q, "attention O");
  const bool rising = p.s("scores") == "rising";  // (Q in [0, 1) then: below)
  d.Q.fill_random(31, rising ? 0.0f : -1.0f, 1.0f);
  d.K.fill_random(32);
  d.V.fill_random(33);
  d.O.fill(0.0f);
  if (d.paged) {  // blocks handed out in a shuffled order, as an allocator that reuses them would
    d.block_table.resize(a.B * d.blocks_per_seq);
    for (std::size_t i = 0; i < d.block_table.size(); ++i) d.block_table[i] = static_cast<std::int32_t>(i);
    std::mt19937 rng(34);
    std::shuffle(d.block_table.begin(), d.block_table.end(), rng);
  }
  if (rising) {
    // Q in [0, 1) and key j's entries raised by 0.25 j / sqrt(D) (up to 512): a row's scaled score grows by
    // about 8 (natural log; 11.5 in log2) every 64 keys, past the Hopper kernel's lazy reference (8 in log2,
    // flash_sm90.hpp) at nearly every key tile; the cap keeps the entries far inside FP16 and BF16 (at D256
    // it is reached after 32768 keys; BF16's step at 256-512 is 2, so there the rise comes in steps).
    const double rise = 0.25 / std::sqrt(static_cast<double>(a.D));
    for (std::int64_t b = 0; b < a.B; ++b)
      for (std::int64_t h = 0; h < a.Hkv; ++h)
        for (std::int64_t j = 0; j < a.Skv; ++j) {
          const float up = static_cast<float>(std::min(rise * static_cast<double>(j), 512.0));
          const std::size_t o = attention_kv_offset(d, a, b, h, j);
          for (std::int64_t x = 0; x < a.D; ++x) d.K.set(o + x, d.K.get(o + x) + up);
        }
  }
  return d;
}

Check attention_check(const AttentionData& d, const Problem& p) {
  const AttentionDims a(p);
  const std::int64_t group = a.H / a.Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.D));
  ErrorMeter m;
  std::vector<double> s(a.Skv), o(a.D);
  for (std::int64_t r : sample_indices(a.B * a.H * a.Sq, 24)) {
    const std::int64_t i = r % a.Sq, h = (r / a.Sq) % a.H, b = r / (a.Sq * a.H);
    const std::int64_t kvh = h / group;
    const std::int64_t n = visible_keys(a, i);
    double mx = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      const std::size_t kr = attention_kv_offset(d, a, b, kvh, j);
      for (std::int64_t x = 0; x < a.D; ++x) acc += double(d.Q.get(r * a.D + x)) * d.K.get(kr + x);
      s[j] = acc * scale;
      mx = std::max(mx, s[j]);
    }
    double denom = 0;
    for (std::int64_t j = 0; j < n; ++j) denom += (s[j] = std::exp(s[j] - mx));
    std::fill(o.begin(), o.end(), 0.0);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t vr = attention_kv_offset(d, a, b, kvh, j);
      for (std::int64_t x = 0; x < a.D; ++x) o[x] += s[j] * d.V.get(vr + x);
    }
    for (std::int64_t x = 0; x < a.D; ++x) m.add(d.O.get(r * a.D + x), o[x] / denom);
  }
  return m.finish(tolerance_for(p.dtype, 1e-4, a.Skv));
}

}  // namespace bwprof
