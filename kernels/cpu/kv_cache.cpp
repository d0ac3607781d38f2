// KV-cache append on the CPU: each sequence's new K/V rows copied into the cache at its position.
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
  const std::size_t fresh = g.B * g.Hkv * g.T * g.D, cache = g.B * g.Hkv * g.S * g.D;
  ensure_host_memory(double(2 * fresh + 2 * cache) * dtype_size(p.dtype), "KV cache");
  KvAppendData d;
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
  return d;
}

void kv_append_cpu(KvAppendData& d, const Problem& p) {
  const Dims g(p);
  const std::size_t es = dtype_size(p.dtype);
  const std::size_t row_bytes = g.T * g.D * es;  // the new tokens of one head are contiguous
  parallel_for(g.B * g.Hkv, 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t bh = lo; bh < hi; ++bh) {
      const std::size_t b = bh / g.Hkv;
      const std::size_t src = bh * g.T * g.D * es;
      const std::size_t dst = (bh * g.S + d.positions[b]) * g.D * es;
      std::memcpy(static_cast<char*>(d.k_cache.data()) + dst, static_cast<const char*>(d.k_new.data()) + src, row_bytes);
      std::memcpy(static_cast<char*>(d.v_cache.data()) + dst, static_cast<const char*>(d.v_new.data()) + src, row_bytes);
    }
  });
}

Check kv_append_check(const KvAppendData& d, const Problem& p) {
  const Dims g(p);
  ErrorMeter m;
  for (std::int64_t bh = 0; bh < g.B * g.Hkv; ++bh) {
    const std::int64_t b = bh / g.Hkv;
    for (std::int64_t t = 0; t < g.T; ++t) {
      const std::size_t src = (bh * g.T + t) * g.D, dst = (bh * g.S + d.positions[b] + t) * g.D;
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
