// KV-cache append: caches and positions (shuffled blocks for the paged layout), and the exact check.
#include <algorithm>
#include <random>

#include "kv_cache/kv_cache.hpp"

namespace bwprof {

KvAppendData make_kv_append_data(const Problem& p) {
  const KvDims g(p);
  KvAppendData d;
  d.paged = p.variant == "paged";
  std::size_t cache = g.B * g.Hkv * g.S * g.D;
  if (d.paged) {
    d.block_size = p.i("block_size");
    d.blocks_per_seq = (g.S + d.block_size - 1) / d.block_size;
    cache = static_cast<std::size_t>(g.B * d.blocks_per_seq * g.Hkv * d.block_size * g.D);
  }
  const std::size_t fresh = g.B * g.Hkv * g.T * g.D;
  d.k_new = HostTensor(p.dtype, fresh, "new K");
  d.v_new = HostTensor(p.dtype, fresh, "new V");
  d.k_cache = HostTensor(p.dtype, cache, "K cache");
  d.v_cache = HostTensor(p.dtype, cache, "V cache");
  d.k_new.fill_random(41);
  d.v_new.fill_random(42);
  d.k_cache.fill(0.0f);
  d.v_cache.fill(0.0f);
  std::mt19937 rng(43);
  std::uniform_int_distribution<std::int64_t> pos(0, g.S - g.T);
  for (std::int64_t b = 0; b < g.B; ++b) d.positions.push_back(static_cast<std::int32_t>(pos(rng)));
  if (d.paged) {  // blocks handed out in a shuffled order, as an allocator that reuses them would
    d.block_table.resize(g.B * d.blocks_per_seq);
    for (std::size_t i = 0; i < d.block_table.size(); ++i) d.block_table[i] = static_cast<std::int32_t>(i);
    std::shuffle(d.block_table.begin(), d.block_table.end(), rng);
  }
  return d;
}

Check kv_append_check(const KvAppendData& d, const Problem& p) {
  const KvDims g(p);
  ErrorMeter m;
  for (std::int64_t bh = 0; bh < g.B * g.Hkv; ++bh) {
    const std::int64_t b = bh / g.Hkv;
    for (std::int64_t t = 0; t < g.T; ++t) {
      const std::size_t src = (bh * g.T + t) * g.D;
      const std::size_t dst = kv_cache_offset(d, g.Hkv, g.S, g.D, b, bh % g.Hkv, d.positions[b] + t);
      for (std::int64_t x = 0; x < g.D; ++x) {
        m.add(d.k_cache.get(dst + x), d.k_new.get(src + x));
        m.add(d.v_cache.get(dst + x), d.v_new.get(src + x));
      }
    }
  }
  return m.finish(0.0);  // a copy is exact
}

}  // namespace bwprof
