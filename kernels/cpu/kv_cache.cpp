// KV-cache append on the CPU: each sequence's new K/V rows copied into the cache at its position.
#include <algorithm>
#include <cstring>
#include <random>

#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

namespace bwprof {

namespace {

struct Dims {
  std::int64_t B, Hkv, D, S, T;
  explicit Dims(const Problem& p)
      : B(p.i("batch")), Hkv(p.i("kv_heads")), D(p.i("head_dim")), S(p.i("max_seq")), T(p.i("new_tokens")) {}
};

BufferList buffers(const KvAppendData& d) {
  BufferList l;
  add_buffer(l, d.k_new);
  add_buffer(l, d.v_new);
  // Only the rows written are touched; the cache's untouched capacity is not part of the run.
  return l;
}

}  // namespace

KvAppendData make_kv_append_data(const Problem& p) {
  const Dims g(p);
  KvAppendData d;
  d.paged = p.variant == "paged";
  std::size_t cache = g.B * g.Hkv * g.S * g.D;
  if (d.paged) {
    d.block_size = p.i("block_size");
    d.blocks_per_seq = (g.S + d.block_size - 1) / d.block_size;
    cache = static_cast<std::size_t>(g.B * d.blocks_per_seq * g.Hkv * d.block_size * g.D);
  }
  const std::size_t fresh = g.B * g.Hkv * g.T * g.D;
  ensure_host_memory(double(2 * fresh + 2 * cache) * dtype_size(p.dtype), "KV cache");
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

void kv_append_cpu(KvAppendData& d, const Problem& p) {
  const Dims g(p);
  const std::size_t es = dtype_size(p.dtype);
  char* kc = static_cast<char*>(d.k_cache.data());
  char* vc = static_cast<char*>(d.v_cache.data());
  const char* kn = static_cast<const char*>(d.k_new.data());
  const char* vn = static_cast<const char*>(d.v_new.data());
  if (!d.paged) {
    const std::size_t bytes = g.T * g.D * es;  // a head's new tokens land in one contiguous run
    parallel_for(g.B * g.Hkv, 1, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t bh = lo; bh < hi; ++bh) {
        const std::size_t dst = kv_cache_offset(d, g.Hkv, g.S, g.D, bh / g.Hkv, bh % g.Hkv, d.positions[bh / g.Hkv]) * es;
        std::memcpy(kc + dst, kn + bh * g.T * g.D * es, bytes);
        std::memcpy(vc + dst, vn + bh * g.T * g.D * es, bytes);
      }
    });
    return;
  }
  const std::size_t row = g.D * es;  // in a paged cache each position may sit in another block
  parallel_for(g.B * g.Hkv * g.T, 64, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r) {
      const std::int64_t t = r % g.T, bh = r / g.T, b = bh / g.Hkv, h = bh % g.Hkv;
      const std::size_t dst = kv_cache_offset(d, g.Hkv, g.S, g.D, b, h, d.positions[b] + t) * es;
      std::memcpy(kc + dst, kn + r * row, row);
      std::memcpy(vc + dst, vn + r * row, row);
    }
  });
}

Check kv_append_check(const KvAppendData& d, const Problem& p) {
  const Dims g(p);
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

std::unique_ptr<KernelInstance> make_kv_cache_append_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_kv_append_data(p), kv_append_cpu, kv_append_check, buffers);
}

}  // namespace bwprof
