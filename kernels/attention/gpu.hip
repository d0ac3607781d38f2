// Flash attention on the GPU: O = softmax(Q.K^T / sqrt(d)).V in one pass over K and V with an online
// softmax (running max and sum, FP32), never forming the score matrix in memory. Two kernels (one
// file each; this file holds the instance and chooses between them):
//   flash (FP16 and BF16, NVIDIA sm_80+, prefill and decode: flash_sm80.hpp): a block of 4 warps
//     takes 64 (or 128) rows, a row being a (query position, query head) pair of one KV head, so
//     K/V tiles are read once for every query head that shares them; tiles of 64 (or 32) keys of K
//     and V are staged in shared memory (cp.async, double-buffered); Q.K^T and P.V run on the
//     matrix units (mma.sync m16n8k16), P staying in registers between the two products.
//   rows (FP32, AMD, NVIDIA before sm_80): one block per query row and group of query heads that
//     share a KV head.
// Both split the KV length over several blocks when there are too few to fill the GPU (flash
// decoding), and a second kernel merges the splits' partial results.
// Both read K/V contiguously [batch, kv_heads, seq_kv, head_dim] or through a paged cache's block
// table ([blocks, kv_heads, block_size, head_dim], the KV-cache append's layout).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

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
    if (a_.D != 32 && a_.D != 64 && a_.D != 80 && a_.D != 96 && a_.D != 128 && a_.D != 256)
      BWPROF_INVALID("head_dim: the flash variants support head dims 32, 64, 80, 96, 128 and 256, got " +
                     std::to_string(a_.D) + " (the cpu variant takes any)");
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
    std::int64_t splits = 1;
#if defined(BWPROF_CUDA)
    const int cc = std::atoi(g.info().arch.c_str() + 3);
    flash_ = p.dtype != DType::kF32 && cc >= 80;
    // BWPROF_ATTN_KERNEL=rows runs the vector-unit kernel instead (a knob for benchmarks).
    if (const char* e = std::getenv("BWPROF_ATTN_KERNEL"); e && std::string(e) == "rows") flash_ = false;
    if (flash_) {
      // The tile: 64 rows x 64 keys (0), 128 x 32 (1) or 128 x 64 (2, the default: measured on an
      // H100 at B1 H32 D128, S4096 356 TFLOP/s against 311 and 257, S1024 279 against 249 and 172);
      // 64 rows where a KV head has no more (decode). BWPROF_FLASH_TILE is a knob for benchmarks.
      const std::int64_t rows = a_.Sq * group_;
      tile_ = rows <= 64 ? 0 : 2;
      if (const char* e = std::getenv("BWPROF_FLASH_TILE")) tile_ = std::atoi(e);
      const int d = static_cast<int>(a_.D);
      const std::int64_t tiles = (rows + attention::flash_tile_rows(tile_, d) - 1) / attention::flash_tile_rows(tile_, d);
      const std::int64_t blocks = tiles * a_.B * a_.Hkv;
      if (blocks > lim) BWPROF_INVALID("seq_q: batch*kv_heads*row tiles beyond 2^31-1 on the GPU");
      // Split the keys while the blocks do not fill two rounds of the GPU (2-3 blocks an SM fit),
      // each split keeping at least 4 key tiles.
      const int keys = attention::flash_tile_keys(tile_, d);
      const std::int64_t want = 2ll * 2 * g.sm_count();
      if (blocks < want)
        splits = std::min<std::int64_t>({(want + blocks - 1) / blocks, (a_.Skv + 4 * keys - 1) / (4 * keys), 65535});
      splits = std::max<std::int64_t>(splits, 1);
      split_len_ = static_cast<int>(((a_.Skv + splits - 1) / splits + keys - 1) / keys * keys);
      splits_ = static_cast<int>((a_.Skv + split_len_ - 1) / split_len_);
    }
#endif
    if (!flash_) {
      G_ = group_ % 8 == 0 ? 8 : group_ % 4 == 0 ? 4 : group_ % 2 == 0 ? 2 : 1;
      if (a_.D > 128) G_ = std::min(G_, 4);  // q and o of 8 heads of 256 would not fit the registers
      const std::int64_t blocks = a_.B * a_.Hkv * (group_ / G_) * a_.Sq;
      const std::int64_t want = 8ll * g.sm_count();
      if (blocks < want) splits = std::min<std::int64_t>((want + blocks - 1) / blocks, (a_.Skv + 127) / 128);
      splits = std::max<std::int64_t>(splits, 1);
      split_len_ = static_cast<int>((a_.Skv + splits - 1) / splits);
      splits_ = static_cast<int>((a_.Skv + split_len_ - 1) / split_len_);
    }
    if (splits_ > 1) {
      const std::size_t rows = static_cast<std::size_t>(a_.B * a_.H * a_.Sq);
      ws_o_ = DeviceBuffer(rows * splits_ * a_.D * sizeof(float), "attention split partials");
      ws_ml_ = DeviceBuffer(rows * splits_ * 2 * sizeof(float), "attention split statistics");
    }
    l_ = attention::Launch{Q_.get(), K_.get(), V_.get(), O_.get(), ws_o_.get<float>(), ws_ml_.get<float>(), kv_,
                           a_.B, a_.H, a_.Hkv, a_.Sq, static_cast<int>(a_.D), group_, G_, splits_, split_len_,
                           scale_log2_, a_.causal, host_.paged, p.dtype, g.stream()};
#if defined(BWPROF_CUDA)
    // The Hopper wgmma prefill kernel (flash_sm90.hip), for now on request only while its speed is
    // measured against the mma.sync kernel: BWPROF_ATTN_KERNEL=wgmma.
    if (const char* e = std::getenv("BWPROF_ATTN_KERNEL"); e && std::string(e) == "wgmma" && flash_)
      sm90_ = attention::make_flash_sm90(g, l_);
#endif
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
#if defined(BWPROF_CUDA)
    if (sm90_) return sm90_->run(l_, launch);
    if (flash_)
      return p_.dtype == DType::kBF16 ? attention::flash_bf16(l_, tile_, launch) : attention::flash_f16(l_, tile_, launch);
#endif
    return attention::rows(l_, p_.dtype, launch);
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
  bool flash_ = false;
  std::unique_ptr<attention::FlashSm90> sm90_;
  int tile_ = 2;
  Resources res_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_attention_gpu(Backend& b, const Problem& p) {
  return std::make_unique<AttentionGpu>(as_gpu(b), p);
}

}  // namespace bwprof
