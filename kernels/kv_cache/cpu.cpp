// KV-cache append on the CPU: each sequence's new K/V rows copied into the cache at its position.
#include <cstring>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "kv_cache/kv_cache.hpp"

namespace bwprof {

namespace {

BufferList buffers(const KvAppendData& d) {
  BufferList l;
  add_buffer(l, d.k_new);
  add_buffer(l, d.v_new);
  // Only the rows written are touched; the cache's untouched capacity is not part of the run.
  return l;
}

}  // namespace

void kv_append_cpu(KvAppendData& d, const Problem& p) {
  const KvDims g(p);
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

std::unique_ptr<KernelInstance> make_kv_cache_append_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_kv_append_data(p), kv_append_cpu, kv_append_check, buffers);
}

}  // namespace bwprof
