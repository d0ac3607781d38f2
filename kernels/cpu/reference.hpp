// Host-side data of every kernel family, the CPU backend's kernels, and the float64 reference
// ("gold") that every backend's output is checked against. A GPU kernel starts from the same
// host data, copies its output back into it, and calls the same check.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {

// ---- shared helpers -------------------------------------------------------------------------

// Up to `max` indices spread evenly over [0, n), always including the first and the last.
std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t max);

// Normwise error: max |out - gold| / max |gold| (or over a caller-given scale).
class ErrorMeter {
 public:
  void add(double out, double gold) {
    double d = std::fabs(out - gold);
    if (!(d <= max_diff_)) max_diff_ = std::isnan(d) ? INFINITY : d;
    double g = std::fabs(gold);
    if (g > max_gold_) max_gold_ = g;
  }
  void add_scale(double s) { if (s > max_gold_) max_gold_ = s; }
  Check finish(double tolerance) const;

 private:
  double max_diff_ = 0, max_gold_ = 0;
};

// Tolerance for an output stored in `dtype`: FP16 storage rounds to 2^-11 relative.
inline double tolerance_for(DType t, double fp32_tol = 1e-5) { return t == DType::kF16 ? 4e-3 : fp32_tol; }

enum class Act { kNone, kRelu, kGelu, kSilu };
Act parse_act(const std::string& name);
inline double act_gold(Act a, double x) {
  switch (a) {
    case Act::kRelu: return x > 0 ? x : 0;
    case Act::kGelu: return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
    case Act::kSilu: return x / (1.0 + std::exp(-x));
    default: return x;
  }
}
inline float act_f(Act a, float x) {
  switch (a) {
    case Act::kRelu: return x > 0.f ? x : 0.f;
    case Act::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
    case Act::kSilu: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

// ---- stream ---------------------------------------------------------------------------------
struct StreamData {
  HostTensor a, b, c;
  float scalar = 0.4f;
  double dot = 0;  // output of stream_dot
};
StreamData make_stream_data(const Problem& p);
void stream_cpu(StreamData& d, const Problem& p);
Check stream_check(const StreamData& d, const Problem& p);

// ---- gemm -----------------------------------------------------------------------------------
struct GemmData {
  HostTensor A, B, bias, C;
};
GemmData make_gemm_data(const Problem& p);
void gemm_cpu(GemmData& d, const Problem& p);
// fp32_tol: the FP32 tolerance (an FP16 output is held to FP16 rounding whatever it says).
Check gemm_check(const GemmData& d, const Problem& p, double fp32_tol = 1e-4);

// ---- QKV projection -------------------------------------------------------------------------
// Y[tokens, 3*hidden] = X[tokens, hidden] . W[hidden, 3*hidden], W the Q, K and V weights side by
// side (row-major, as the GEMM's B).
struct QkvData {
  HostTensor X, W, Y;
};
QkvData make_qkv_data(const Problem& p);
void qkv_cpu(QkvData& d, const Problem& p);
Check qkv_check(const QkvData& d, const Problem& p);

// ---- attention ------------------------------------------------------------------------------
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
AttentionData make_attention_data(const Problem& p);
void attention_cpu(AttentionData& d, const Problem& p);
Check attention_check(const AttentionData& d, const Problem& p);

// ---- KV-cache append ------------------------------------------------------------------------
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

// ---- Q4_0 -----------------------------------------------------------------------------------
// llama.cpp's block: an FP16 scale, then 16 bytes holding 32 4-bit values (element j in the low
// nibble of byte j, element j + 16 in the high nibble); value = (q - 8) * scale.
constexpr int kQ4Block = 32;
constexpr int kQ4BlockBytes = 18;
void q4_0_quantize_row(const float* x, std::int64_t n, std::uint8_t* out);
void q4_0_dequantize_row(const std::uint8_t* q, std::int64_t n, float* out);

struct Q4DequantData {
  HostBytes q;  // rows * cols / 32 blocks
  HostTensor out;
};
Q4DequantData make_q4_dequant_data(const Problem& p);
void q4_dequant_cpu(Q4DequantData& d, const Problem& p);
Check q4_dequant_check(const Q4DequantData& d, const Problem& p);

struct Q4MatmulData {
  HostTensor X, Y;
  HostBytes W;  // N rows of K/32 blocks
};
Q4MatmulData make_q4_matmul_data(const Problem& p);
void q4_matmul_cpu(Q4MatmulData& d, const Problem& p);
Check q4_matmul_check(const Q4MatmulData& d, const Problem& p);

// ---- layer norm -----------------------------------------------------------------------------
constexpr float kLayerNormEps = 1e-5f;
struct LayerNormData {
  HostTensor x, weight, bias, y;
};
LayerNormData make_layernorm_data(const Problem& p);
void layernorm_cpu(LayerNormData& d, const Problem& p);
Check layernorm_check(const LayerNormData& d, const Problem& p);

// ---- bias + activation ----------------------------------------------------------------------
struct BiasActData {
  HostTensor x, bias, y;
};
BiasActData make_bias_act_data(const Problem& p);
void bias_act_cpu(BiasActData& d, const Problem& p);
Check bias_act_check(const BiasActData& d, const Problem& p);

// ---- GEMV ------------------------------------------------------------------------------------
// y[N] = W[N,K] . x[K] (W row-major, as a linear layer's weight), FP32 accumulation.
struct GemvData {
  HostTensor W, x, y;
};
GemvData make_gemv_data(const Problem& p);
void gemv_cpu(GemvData& d, const Problem& p);
Check gemv_check(const GemvData& d, const Problem& p);

// ---- intensity sweep ---------------------------------------------------------------------------
// y[i] = x[i] after `fmas` steps of v = v * a + b: 2 * fmas FLOPs per element read and written.
// a = b = 0.5 keeps every value finite and every FMA necessary (no step can be folded away).
constexpr float kSweepA = 0.5f, kSweepB = 0.5f;
struct SweepData {
  HostTensor x, y;
};
SweepData make_sweep_data(const Problem& p);
void sweep_cpu(SweepData& d, const Problem& p);
Check sweep_check(const SweepData& d, const Problem& p);

}  // namespace bwprof
