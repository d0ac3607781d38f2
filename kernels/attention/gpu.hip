// Flash attention on the GPU: O = softmax(Q.K^T / sqrt(d)).V in one pass over K and V with an online
// softmax (running max and sum, FP32), never forming the score matrix in memory. Four kernels (one
// file each; this file holds the instance and chooses among them):
//   wgmma (FP16 and BF16, NVIDIA Hopper, prefill: flash_sm90.hip): 128 query rows of a head per
//     tile, wgmma fed by the bulk tensor copy engine, a persistent grid.
//   decode (FP16 and BF16, NVIDIA sm_80+, up to 32 query rows per KV head: decode_sm80.hpp): the
//     rows of a KV head's query heads on the matrix units' M side, each warp streaming its own keys.
//   flash (FP16 and BF16, NVIDIA sm_80+, any shape: flash_sm80.hpp): a block of 4 warps takes 64
//     (or 128) rows, a row being a (query position, query head) pair of one KV head, so K/V tiles
//     are read once for every query head that shares them; mma.sync m16n8k16.
//   rows (FP32, AMD, NVIDIA before sm_80): one block per query row and group of query heads that
//     share a KV head.
// Where a KV head has too few rows to fill the GPU, the keys are split over several blocks (flash
// decoding), and a second kernel merges the splits' partial results (the decode kernel: the last
// block of each KV head to finish merges them).
// All read K/V contiguously [batch, kv_heads, seq_kv, head_dim] or through a paged cache's block
// table ([blocks, kv_heads, block_size, head_dim], the KV-cache append's layout).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/gpu.hpp"
#include "bwprof/arch.hpp"
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
    l_ = attention::Launch{Q_.get(), K_.get(), V_.get(), O_.get(), nullptr, nullptr, nullptr, kv_,
                           a_.B, a_.H, a_.Hkv, a_.Sq, static_cast<std::int64_t>(host_.K.size() / a_.D),
                           static_cast<int>(a_.D), group_, 1, 1, 1, scale_log2_, a_.causal, host_.paged, p.dtype,
                           g.stream()};
    kernel_ = choose(g);
    const std::int64_t sms = g.sm_count();
    const std::int64_t rows_all = a_.B * a_.H * a_.Sq, rows = a_.Sq * group_;
    // The key split (attention/choice.hpp), or as the `splits` parameter asks (as far as the keys,
    // in whole steps, and the merge allow).
    const auto asked = p.opt_i("splits");
    if (asked && kernel_ == Kernel::kWgmma)
      BWPROF_INVALID("splits: the wgmma kernel does not split the keys (its grid is persistent)");
    attention::KeySplit split{1, static_cast<int>(a_.Skv)};
    int step = 1;  // keys a split is a multiple of
    if (kernel_ == Kernel::kFlash) {
      tile_ = attention::flash_tile(rows);
      const int d = static_cast<int>(a_.D);
      const std::int64_t tiles = (rows + attention::flash_tile_rows(tile_, d) - 1) / attention::flash_tile_rows(tile_, d);
      if (tiles * a_.B * a_.Hkv > lim) BWPROF_INVALID("seq_q: batch*kv_heads*row tiles beyond 2^31-1 on the GPU");
      split = attention::flash_split(a_.B, a_.Hkv, rows, a_.Skv, d, tile_, sms);
      step = attention::flash_tile_keys(d);
    } else if (kernel_ == Kernel::kDecode) {
      const std::int64_t blocks = a_.B * a_.Hkv;
      if (blocks > lim) BWPROF_INVALID("batch*kv_heads: beyond 2^31-1 on the GPU");
      const Resources r = dispatch(false);
      if (r.runtime_blocks_per_sm < 1) BWPROF_INVALID("head_dim: the decode kernel's ring does not fit this GPU");
      split = attention::decode_split(a_.B, a_.Hkv, rows, a_.Skv, static_cast<int>(a_.D), host_.paged,
                                      r.runtime_blocks_per_sm, sms);
      step = attention::kDecodeStepKeys;
      if (asked) {
        const std::int64_t most = std::min<std::int64_t>(
            {(a_.Skv + step - 1) / step, attention::kDecodeMaxMerge / rows, 65535});
        split.splits = static_cast<int>(std::min<std::int64_t>(*asked, std::max<std::int64_t>(1, most)));
      }
    } else if (kernel_ == Kernel::kRows) {
      G_ = group_ % 8 == 0 ? 8 : group_ % 4 == 0 ? 4 : group_ % 2 == 0 ? 2 : 1;
      if (a_.D > 128) G_ = std::min(G_, 4);  // q and o of 8 heads of 256 would not fit the registers
      split = attention::rows_split(a_.B * a_.Hkv * (group_ / G_) * a_.Sq, a_.Skv, sms);
    }
    if (kernel_ != Kernel::kWgmma) {
      if (asked && kernel_ != Kernel::kDecode) split.splits = static_cast<int>(std::min<std::int64_t>(*asked, a_.Skv));
      if (asked)
        split.split_len = static_cast<int>(((a_.Skv + split.splits - 1) / split.splits + step - 1) / step * step);
      // Nothing split (before the cap below): the decode ring that keeps the SMs' bytes in flight
      // near what they need.
      if (kernel_ == Kernel::kDecode && split.splits == 1)
        l_.decode_stages = attention::decode_unsplit_ring(static_cast<int>(a_.D), a_.Skv, a_.B * a_.Hkv, sms,
                                                          g_.info().bandwidth_theoretical_gbs);
      // The partial rows stay within kMaxPartialRows (the family's footprint counts on it).
      split = attention::cap_partial_rows(split, rows_all, a_.Skv, step);
      splits_ = split.splits, split_len_ = split.split_len;
    }
    if (splits_ > 1) {
      ws_o_ = DeviceBuffer(static_cast<std::size_t>(rows_all) * splits_ * a_.D * sizeof(float), "attention split partials");
      ws_ml_ = DeviceBuffer(static_cast<std::size_t>(rows_all) * splits_ * 2 * sizeof(float), "attention split statistics");
      if (kernel_ == Kernel::kDecode) {  // the splits' arrival counters, zero between launches
        arrivals_ = DeviceBuffer(static_cast<std::size_t>(a_.B * a_.Hkv) * sizeof(int), "attention split arrivals");
        arrivals_.fill(0);
      }
    }
    l_.ws_o = ws_o_.get<float>();
    l_.ws_ml = ws_ml_.get<float>();
    l_.arrivals = arrivals_.get<int>();
    l_.G = G_;
    l_.splits = splits_;
    l_.split_len = split_len_;
#if defined(BWPROF_CUDA)
    if (kernel_ == Kernel::kWgmma) sm90_ = attention::make_flash_sm90(g, l_);
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
  std::string explain() const override {
    static const char* const kNames[] = {"rows", "flash", "decode", "wgmma"};
    std::string out = kNames[static_cast<int>(kernel_)];
    if (kernel_ == Kernel::kFlash)
      out += attention::flash_tile_rows(tile_, static_cast<int>(a_.D)) == 64 ? " 64-row tile" : " 128-row tile";
    if (kernel_ == Kernel::kRows) out += " " + std::to_string(G_) + " heads a block";
    if (kernel_ == Kernel::kDecode && l_.decode_stages > 0) out += " ring " + std::to_string(l_.decode_stages);
    if (kernel_ != Kernel::kWgmma) out += " splits " + std::to_string(splits_) + " of " + std::to_string(split_len_) + " keys";
    return out;
  }

 private:
  enum class Kernel { kRows, kFlash, kDecode, kWgmma };

  // FP32 (and every GPU without NVIDIA's matrix units): rows. FP16/BF16 on sm_80+: decode where a
  // KV head has at most 32 query rows (16 at head dim 256), the Hopper kernel where every head has
  // a whole tile of 128 query positions or more and it takes the layout, flash otherwise. The
  // `engine` parameter asks for one (an error where that kernel cannot take the problem).
  Kernel choose(GpuBackend& g) {
    Kernel k = Kernel::kRows;
    bool decode_ok = false, wgmma_ok = false, flash_ok = false;
#if defined(BWPROF_CUDA)
    const int cc = sm_version(g.info().arch);
    flash_ok = p_.dtype != DType::kF32 && cc >= 80;
    decode_ok = flash_ok && attention::decode_takes(l_);
    wgmma_ok = flash_ok && attention::sm90_takes(g, l_);
    if (flash_ok) k = decode_ok ? Kernel::kDecode : wgmma_ok && a_.Sq >= 128 ? Kernel::kWgmma : Kernel::kFlash;
#else
    (void)g;
#endif
    const std::string& want = p_.s("engine");
    if (want != "auto") {
      const std::vector<std::string> names = {"rows", "flash", "decode", "wgmma"};
      const Kernel kinds[] = {Kernel::kRows, Kernel::kFlash, Kernel::kDecode, Kernel::kWgmma};
      const bool takes[] = {true, flash_ok, decode_ok, wgmma_ok};
      const std::size_t i = std::find(names.begin(), names.end(), want) - names.begin();
      if (i >= names.size()) BWPROF_INVALID("engine: unknown attention kernel '" + want + "'");
      static const char* const kTakes[] = {"", "fp16 or bf16 on sm_80+", "fp16 or bf16 on sm_80+, at most 32 query rows a KV head (16 at head dim 256)",
                                           "fp16 or bf16 on sm_90 in a build with sm_90a code"};
      if (!takes[i]) BWPROF_INVALID("engine: " + want + " does not take this problem here (it takes " + kTakes[i] + ")");
      k = kinds[i];
    }
    return k;
  }

  Resources dispatch(bool launch) {
#if defined(BWPROF_CUDA)
    const bool bf = p_.dtype == DType::kBF16;
    switch (kernel_) {
      case Kernel::kWgmma: return sm90_->run(l_, launch);
      case Kernel::kDecode: return bf ? attention::decode_bf16(l_, launch) : attention::decode_f16(l_, launch);
      case Kernel::kFlash: return bf ? attention::flash_bf16(l_, tile_, launch) : attention::flash_f16(l_, tile_, launch);
      default: break;
    }
#endif
    return attention::rows(l_, p_.dtype, launch);
  }

  GpuBackend& g_;
  Problem p_;
  AttentionDims a_;
  AttentionData host_;
  DeviceBuffer Q_, K_, V_, O_, table_, ws_o_, ws_ml_, arrivals_;
  attention::KvLayout kv_{};
  attention::Launch l_{};
  float scale_log2_ = 0;
  int group_ = 1, G_ = 1, splits_ = 1, split_len_ = 1;
  Kernel kernel_ = Kernel::kRows;
  std::unique_ptr<attention::FlashSm90> sm90_;
  int tile_ = 2;
  Resources res_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_attention_gpu(Backend& b, const Problem& p) {
  return std::make_unique<AttentionGpu>(as_gpu(b), p);
}

}  // namespace bwprof
