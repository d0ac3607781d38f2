// KV-cache append: a decode or prefill step writing its new K and V into the cache, contiguous or
// paged (blocks named by a block table, as serving engines keep them).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "common/shape_limits.hpp"
#include "common/suite_shapes.hpp"
#include "kv_cache/kv_cache.hpp"

namespace bwprof {

void register_family_kv_cache(Registry& r) {
  using namespace suite;
  KernelFamily k;
  k.name = "kv_cache_append";
  k.family = "kv_cache";
  k.order = 50;
  k.doc = "write new K and V [batch, kv_heads, new_tokens, head_dim] into caches "
          "[batch, kv_heads, max_seq, head_dim] at each sequence's position";
  k.params = {int_param("batch", "1", 1, kMaxBatch, "sequences"), int_param("kv_heads", "", 1, kMaxHeads, "key/value heads"),
              int_param("head_dim", "", 1, kMaxHeadDim, "dimension of a head"),
              int_param("max_seq", "", 1, kMaxDim, "cache capacity in positions"),
              int_param("new_tokens", "1", 1, kMaxDim, "positions appended per sequence"),
              int_param("block_size", "16", 1, kMaxBlockSize, "positions per block of a paged cache")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.pattern = AccessPattern::kStrided;
  k.validate = [](const Problem& p) {
    if (p.i("new_tokens") > p.i("max_seq")) BWPROF_INVALID("new_tokens: must not exceed max_seq");
    checked_elements(p, {"batch", "kv_heads", "max_seq", "head_dim"});
  };
  k.traffic = [](const Problem& p) {
    double n = double(p.i("batch")) * p.i("kv_heads") * p.i("new_tokens") * p.i("head_dim");
    // Positions, and for a paged cache the block-table entries the new tokens span.
    double index = 4.0 * p.i("batch");
    if (p.variant == "paged") index += 4.0 * p.i("batch") * (p.i("new_tokens") / p.i("block_size") + 1);
    return Traffic{2 * n * elem_bytes(p) + index, 2 * n * elem_bytes(p), 0};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double B = p.i("batch"), H = p.i("kv_heads"), D = p.i("head_dim"), S = p.i("max_seq");
    const double fresh = B * H * p.i("new_tokens") * D;
    // A paged cache rounds every sequence up to whole blocks, named by a block table.
    const double blocks = p.variant == "paged" ? B * std::ceil(S / double(p.i("block_size"))) : 0.0;
    const double cache = p.variant == "paged" ? blocks * H * p.i("block_size") * D : B * H * S * D;
    return host_and_device((2 * fresh + 2 * cache) * elem_bytes(p) + 4 * B + 4 * std::max(blocks, 1.0), kind);
  };
  k.variants.push_back(Variant{"contiguous", "cpu", make_kv_cache_append_cpu});
  k.variants.push_back(Variant{"paged", "cpu", make_kv_cache_append_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"contiguous", "gpu", make_kv_cache_append_gpu});
  k.variants.push_back(Variant{"paged", "gpu", make_kv_cache_append_gpu});
#endif
  const std::vector<std::string> both = {"contiguous", "paged"};
  const ParamList kv = {{"kv_heads", kKvHeads}, {"head_dim", kHeadDim}};
  auto with = [&](ParamList more) {
    ParamList p = kv;
    p.insert(p.end(), more.begin(), more.end());
    return p;
  };
  k.suite = {
      {"decode step", with({{"max_seq", 4096}, {"new_tokens", 1}}), with({{"max_seq", 512}, {"new_tokens", 1}}), both},
      {"decode b={batch}", with({{"batch", 32}, {"max_seq", 4096}, {"new_tokens", 1}}),
       with({{"batch", 8}, {"max_seq", 512}, {"new_tokens", 1}}), both},
      {"prefill {new_tokens} b={batch}", with({{"batch", 8}, {"max_seq", 4096}, {"new_tokens", 2048}}),
       with({{"batch", 2}, {"max_seq", 512}, {"new_tokens", 256}}), both},
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
