// Flash attention on the GPU: O = softmax(Q.K^T / sqrt(d)).V in one pass over K and V with an online
// softmax (running max and sum, FP32), never forming the score matrix in memory. Two kernels (one
// file each; this file holds the instance and chooses between them):
//   prefill (FP16, NVIDIA sm_80+, seq_q >= 16): a block of 4 warps takes 64 (or 128) query rows;
//     tiles of 64 (or 32) keys of K and V are staged in shared memory (cp.async, double-buffered);
//     Q.K^T and P.V run on the matrix units (mma.sync m16n8k16), P staying in registers between the
//     two products.
//   rows (FP32, decode, short queries, AMD): one block per query row and group of query heads that
//     share a KV head; the KV length is split over several blocks when there are too few rows to
//     fill the GPU (flash decoding), and a second kernel merges the splits' partial results.
// Both read K/V contiguously [batch, kv_heads, seq_kv, head_dim] or through a paged cache's block
// table ([blocks, kv_heads, block_size, head_dim], the KV-cache append's layout).
#include <cmath>
#include <cstdlib>

#include "attention/attention.hpp"
#include "attention/gpu.hpp"
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

constexpr float kLog2e = 1.4426950408889634f;

class AttentionGpu final : public KernelInstance {
 public:
  AttentionGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), a_(p) {
    if (a_.D != 32 && a_.D != 64 && a_.D != 128)
      BWPROF_INVALID("head_dim: the flash variants support head dims 32, 64 and 128, got " + std::to_string(a_.D) +
                     " (the cpu variant takes any)");
    const std::int64_t lim = 2147483647;
    if (a_.B * a_.H * a_.Sq > lim || a_.Skv > lim) BWPROF_INVALID("seq_q/seq_kv: sizes beyond 2^31-1 on the GPU");
    host_ = make_attention_data(p);
    Q_ = DeviceBuffer::from(host_.Q, "attention Q");
    K_ = DeviceBuffer::from(host_.K, "attention K");
    V_ = DeviceBuffer::from(host_.V, "attention V");
    O_ = DeviceBuffer::from(host_.O, "attention O");
    kv_.kv_heads = static_cast<int>(a_.Hkv);
    kv_.seq_kv = static_cast<int>(a_.Skv);
    kv_.block_size = static_cast<int>(host_.block_size);
    kv_.blocks_per_seq = static_cast<int>(host_.blocks_per_seq);
    kv_.table = nullptr;
    if (host_.paged) {
      table_ = DeviceBuffer(host_.block_table.size() * sizeof(std::int32_t), "attention block table");
      table_.upload(host_.block_table.data(), table_.bytes());
      kv_.table = table_.get<int>();
    }
    scale_log2_ = static_cast<float>(kLog2e / std::sqrt(static_cast<double>(a_.D)));
    group_ = static_cast<int>(a_.H / a_.Hkv);
#if defined(BWPROF_CUDA)
    const int cc = std::atoi(g.info().arch.c_str() + 3);
    prefill_ = p.dtype == DType::kF16 && a_.Sq >= 16 && cc >= 80;
    // The prefill tile: 64 rows x 64 keys (0), 128 x 32 (1) or 128 x 64 (2, the default: measured on
    // an H100 at B1 H32 D128, S4096 356 TFLOP/s against 311 and 257, S1024 279 against 249 and 172).
    // BWPROF_FLASH_TILE is a tuning knob for benchmarks.
    if (const char* e = std::getenv("BWPROF_FLASH_TILE")) tile_ = std::atoi(e);
#endif
    if (!prefill_) {
      G_ = group_ % 8 == 0 ? 8 : group_ % 4 == 0 ? 4 : group_ % 2 == 0 ? 2 : 1;
      const std::int64_t blocks = a_.B * a_.Hkv * (group_ / G_) * a_.Sq;
      const std::int64_t want = 8ll * g.sm_count();
      std::int64_t splits = 1;
      if (blocks < want) splits = std::min<std::int64_t>((want + blocks - 1) / blocks, (a_.Skv + 127) / 128);
      splits = std::max<std::int64_t>(splits, 1);
      split_len_ = static_cast<int>((a_.Skv + splits - 1) / splits);
      splits_ = static_cast<int>((a_.Skv + split_len_ - 1) / split_len_);
      if (splits_ > 1) {
        const std::size_t rows = static_cast<std::size_t>(a_.B * a_.H * a_.Sq);
        ws_o_ = DeviceBuffer(rows * splits_ * a_.D * sizeof(float), "attention split partials");
        ws_ml_ = DeviceBuffer(rows * splits_ * 2 * sizeof(float), "attention split statistics");
      }
    }
    l_ = attention::Launch{Q_.get(), K_.get(), V_.get(), O_.get(), ws_o_.get<float>(), ws_ml_.get<float>(), kv_,
                           a_.B, a_.H, a_.Hkv, a_.Sq, static_cast<int>(a_.D), group_, G_, splits_, split_len_,
                           scale_log2_, a_.causal, host_.paged, g.stream()};
    res_ = dispatch(false);
  }
  void launch() override { dispatch(true); }
  Check check() override {
    g_.synchronize();
    O_.to(host_.O);
    return attention_check(host_, p_);
  }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(bool launch) {
    if (p_.dtype == DType::kF32) return attention::rows(l_, DType::kF32, launch);
#if defined(BWPROF_CUDA)
    if (prefill_) return attention::prefill(l_, tile_, launch);
#endif
    return attention::rows(l_, DType::kF16, launch);
  }

  GpuBackend& g_;
  Problem p_;
  AttentionDims a_;
  AttentionData host_;
  DeviceBuffer Q_, K_, V_, O_, table_, ws_o_, ws_ml_;
  attention::KvLayout kv_{};
  attention::Launch l_{};
  float scale_log2_ = 0;
  int group_ = 1, G_ = 1, splits_ = 1, split_len_ = 1;
  bool prefill_ = false;
  int tile_ = 2;
  Resources res_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_attention_gpu(Backend& b, const Problem& p) {
  return std::make_unique<AttentionGpu>(as_gpu(b), p);
}

}  // namespace bwprof
