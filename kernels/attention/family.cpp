// Attention: softmax(Q.K^T / sqrt(d)).V per head, grouped-query KV heads, optional causal mask,
// K/V contiguous or in a paged cache.
#include <algorithm>
#include <cmath>
#include <string>

#include "attention/attention.hpp"
#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "common/shape_limits.hpp"
#include "common/suite_shapes.hpp"

namespace bwprof {

void register_family_attention(Registry& r) {
  using namespace suite;
  KernelFamily k;
  k.name = k.family = "attention";
  k.order = 40;
  k.doc = "O = softmax(Q.K^T / sqrt(d)) . V per head, optional causal mask, grouped-query KV heads";
  // The inputs' kind: a setting added after rows were recorded, left out of the shape at its default.
  ParamSpec scores = choice_param("scores", "uniform", {"uniform", "rising"},
                                  "inputs: uniform in [-1, 1), or rising: every row's scores climb along the keys, so "
                                  "the softmax's running maximum grows at nearly every key tile (the worst case for a "
                                  "kernel that skips the rescale while the maximum holds)");
  scores.in_shape_at_default = false;
  k.params = {int_param("batch", "1", 1, kMaxBatch, "sequences"), int_param("heads", "", 1, kMaxHeads, "query heads"),
              int_param("kv_heads", "0", 0, kMaxHeads, "key/value heads (0: same as heads)"),
              int_param("seq_q", "", 1, kMaxDim, "query positions (1 for decode)"),
              int_param("seq_kv", "0", 0, kMaxDim, "key/value positions (0: same as seq_q)"),
              int_param("head_dim", "", 1, kMaxHeadDim, "dimension of a head"),
              bool_param("causal", "false", "mask keys after each query's position"),
              int_param("block_size", "16", 1, kMaxBlockSize, "positions per block of a paged KV cache (paged variants)"),
              scores,
              // The GPU variants' kernel and key split (attention/choice.hpp's rules unless set).
              auto_choice_param("engine", {"rows", "flash", "decode", "wgmma"}, {"flash", "flash_paged"},
                                "GPU variants: rows (vector units, every GPU), flash (mma.sync, sm_80+), decode "
                                "(sm_80+, at most 32 query rows a KV head), wgmma (Hopper, sm_90a builds)"),
              auto_int_param("splits", 1, 65535, {"flash", "flash_paged"},
                             "blocks that split each row's keys, merged after (rows, flash, decode; not wgmma)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.resolve = [](Problem& p) {
    if (p.i("kv_heads") == 0) p.set("kv_heads", p.i("heads"));
    if (p.i("seq_kv") == 0) p.set("seq_kv", p.i("seq_q"));
  };
  k.validate = [](const Problem& p) {
    std::int64_t h = p.i("heads"), hkv = p.i("kv_heads") ? p.i("kv_heads") : h;
    std::int64_t sq = p.i("seq_q"), skv = p.i("seq_kv") ? p.i("seq_kv") : sq;
    if (h % hkv) BWPROF_INVALID("kv_heads: heads (" + std::to_string(h) + ") must be a multiple of kv_heads (" + std::to_string(hkv) + ")");
    if (p.b("causal") && sq > skv) BWPROF_INVALID("seq_q: a causal mask needs seq_q <= seq_kv");
    checked_elements(p, {"batch", "heads", "seq_q", "head_dim"});
    checked_mul(checked_mul(p.i("batch") * hkv, skv, "batch*kv_heads*seq_kv"), p.i("head_dim"), "K/V size");
  };
  k.traffic = [](const Problem& p) {
    double B = p.i("batch"), H = p.i("heads"), D = p.i("head_dim");
    double Hkv = p.i("kv_heads") ? p.i("kv_heads") : H;
    double Sq = p.i("seq_q"), Skv = p.i("seq_kv") ? p.i("seq_kv") : Sq;
    // Causal: query i (aligned to the end of the keys) sees Skv - Sq + i + 1 keys.
    double pairs = p.b("causal") ? Sq * (Skv - Sq) + Sq * (Sq + 1) / 2 : Sq * Skv;
    // A paged cache is also read through its block table.
    double table = p.variant.find("paged") != std::string::npos
                       ? 4.0 * B * std::ceil(Skv / double(p.i("block_size"))) : 0.0;
    return Traffic{(B * H * Sq * D + 2 * B * Hkv * Skv * D) * elem_bytes(p) + table, B * H * Sq * D * elem_bytes(p),
                   4 * B * H * D * pairs};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double B = p.i("batch"), H = p.i("heads"), Hkv = p.i("kv_heads"), Sq = p.i("seq_q"),
                 Skv = p.i("seq_kv"), D = p.i("head_dim");
    const bool paged = p.variant.find("paged") != std::string::npos;
    // A paged cache rounds every sequence up to whole blocks, named by a block table.
    const double blocks = paged ? B * std::ceil(Skv / double(p.i("block_size"))) : 0.0;
    const double kv = paged ? blocks * Hkv * p.i("block_size") * D : B * Hkv * Skv * D;
    const double rows = B * H * Sq;
    // Q, O, K, V and the table; the check's scores (a double per key). On the GPU the split-KV
    // decode's partial rows and their statistics, FP32: at most ceil(seq_kv / 128) splits of every
    // row, and no more than every row once or 16384 partial rows (gpu.hip's kMaxPartialRows), with
    // the decode kernel's arrival counter per (sequence, KV head); and the Hopper kernel's tile counter.
    const double splits = std::ceil(Skv / 128.0);
    const double partial_rows = splits > 1 ? std::min(rows * splits, std::max(rows, 16384.0)) : 0.0;
    return host_and_device((2 * rows * D + 2 * kv) * elem_bytes(p) + 4 * blocks + 8 * Skv, kind,
                           partial_rows * (D + 2) * 4 + (splits > 1 ? 4 * B * Hkv : 0.0) + 8);
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_attention_cpu});
  k.variants.push_back(Variant{"paged", "cpu", make_attention_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"flash", "gpu", make_attention_gpu}.on_matrix_units());
  k.variants.push_back(Variant{"flash_paged", "gpu", make_attention_gpu}.on_matrix_units());
#endif
  const ParamList attn = {{"heads", kHeads}, {"kv_heads", kKvHeads}, {"head_dim", kHeadDim}};
  auto with = [&](ParamList more) {
    ParamList p = attn;
    p.insert(p.end(), more.begin(), more.end());
    return p;
  };
  const std::vector<DType> bf16_too = {DType::kF32, DType::kF16, DType::kBF16};
  k.suite = {
      {"decode kv={seq_kv}", with({{"seq_q", 1}, {"seq_kv", 1024}}), with({{"seq_q", 1}, {"seq_kv", 256}})},
      {"decode kv={seq_kv} b={batch}", with({{"batch", 4}, {"seq_q", 1}, {"seq_kv", 4096}}),
       with({{"batch", 2}, {"seq_q", 1}, {"seq_kv", 512}}), {}, bf16_too},
      {"decode paged kv={seq_kv} b={batch}", with({{"batch", 4}, {"seq_q", 1}, {"seq_kv", 4096}}),
       with({{"batch", 2}, {"seq_q", 1}, {"seq_kv", 512}}), {"paged", "flash_paged"}},
      {"prefill causal {seq_q}", with({{"seq_q", 512}, {"causal", true}}), with({{"seq_q", 64}, {"causal", true}}), {},
       bf16_too},
      {"encoder", {{"heads", kEncHeads}, {"head_dim", kEncHeadDim}, {"seq_q", kEncTokens}},
       {{"heads", kEncHeads}, {"head_dim", kEncHeadDim}, {"seq_q", 32}}},
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
