// Attention: host tensors (contiguous or paged K/V), the CPU kernel and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

struct AttentionDims {
  std::int64_t B, H, Hkv, Sq, Skv, D;
  bool causal;
  explicit AttentionDims(const Problem& p);
};
// K and V are [batch, kv_heads, seq_kv, head_dim], or for the paged variants the KV-cache append's
// paged layout [blocks, kv_heads, block_size, head_dim], a sequence's positions found through its
// row of the block table.
struct AttentionData {
  HostTensor Q, K, V, O;
  bool paged = false;
  std::int64_t block_size = 0, blocks_per_seq = 0;
  std::vector<std::int32_t> block_table;  // [batch, blocks_per_seq] -> physical block
};
// Element offset of key/value position `pos` of (sequence b, KV head h), for either layout.
inline std::size_t attention_kv_offset(const AttentionData& d, const AttentionDims& a, std::int64_t b,
                                       std::int64_t h, std::int64_t pos) {
  if (!d.paged) return static_cast<std::size_t>(((b * a.Hkv + h) * a.Skv + pos) * a.D);
  const std::int64_t blk = d.block_table[b * d.blocks_per_seq + pos / d.block_size];
  return static_cast<std::size_t>(((blk * a.Hkv + h) * d.block_size + pos % d.block_size) * a.D);
}
// Keys visible to query i: all, or with the causal mask (queries aligned to the end of the keys)
// those up to position Skv - Sq + i.
inline std::int64_t visible_keys(const AttentionDims& a, std::int64_t i) {
  return a.causal ? a.Skv - a.Sq + i + 1 : a.Skv;
}
AttentionData make_attention_data(const Problem& p);
void attention_cpu(AttentionData& d, const Problem& p);
Check attention_check(const AttentionData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_attention_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_attention_gpu(Backend&, const Problem&);

}  // namespace bwprof
