// KV-cache append: host caches (contiguous or paged), the CPU copy and the gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// The problem's sizes: batch, KV heads, head dim, cache capacity (max_seq), new tokens.
struct KvDims {
  std::int64_t B, Hkv, D, S, T;
  explicit KvDims(const Problem& p)
      : B(p.i("batch")), Hkv(p.i("kv_heads")), D(p.i("head_dim")), S(p.i("max_seq")), T(p.i("new_tokens")) {}
};

// Contiguous caches are [batch, kv_heads, max_seq, head_dim]. Paged caches (as serving engines
// keep them) are [blocks, kv_heads, block_size, head_dim], a sequence's positions spread over
// fixed-size blocks named by its row of the block table.
struct KvAppendData {
  HostTensor k_new, v_new, k_cache, v_cache;
  std::vector<std::int32_t> positions;  // first position written, per sequence
  bool paged = false;
  std::int64_t block_size = 0, blocks_per_seq = 0;
  std::vector<std::int32_t> block_table;  // [batch, blocks_per_seq] -> physical block
};
// Element offset of (sequence b, head h, position pos) in the cache, for either layout.
inline std::size_t kv_cache_offset(const KvAppendData& d, std::int64_t kv_heads, std::int64_t max_seq,
                                   std::int64_t head_dim, std::int64_t b, std::int64_t h, std::int64_t pos) {
  if (!d.paged) return static_cast<std::size_t>(((b * kv_heads + h) * max_seq + pos) * head_dim);
  const std::int64_t blk = d.block_table[b * d.blocks_per_seq + pos / d.block_size];
  return static_cast<std::size_t>(((blk * kv_heads + h) * d.block_size + pos % d.block_size) * head_dim);
}
KvAppendData make_kv_append_data(const Problem& p);
void kv_append_cpu(KvAppendData& d, const Problem& p);
Check kv_append_check(const KvAppendData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_kv_cache_append_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_kv_cache_append_gpu(Backend&, const Problem&);

}  // namespace bwprof
