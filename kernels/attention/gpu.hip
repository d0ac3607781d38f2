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
#include <cstdlib>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/gpu.hpp"
#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

constexpr float kLog2e = 1.4426950408889634f;
// Split partial rows (rows x splits) stay within this many, or one per row where the rows alone are
// more (then no split): the family's footprint (family.cpp) counts on it.
constexpr std::int64_t kMaxPartialRows = 16384;

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
    std::int64_t splits = 1;
    const std::int64_t sms = g.sm_count();
    const std::int64_t rows_all = a_.B * a_.H * a_.Sq;
    if (kernel_ == Kernel::kFlash) {
      // The tile: 64 rows x 64 keys (0), 128 x 32 (1) or 128 x 64 (2, the default: measured on an
      // H100 at B1 H32 D128, S4096 356 TFLOP/s against 311 and 257, S1024 279 against 249 and 172);
      // 64 rows where a KV head has no more. BWPROF_FLASH_TILE is a knob for benchmarks.
      const std::int64_t rows = a_.Sq * group_;
      tile_ = rows <= 64 ? 0 : 2;
      tile_ = static_cast<int>(knob_int("BWPROF_FLASH_TILE", 0, 2).value_or(tile_));
      const int d = static_cast<int>(a_.D);
      const std::int64_t tiles = (rows + attention::flash_tile_rows(tile_, d) - 1) / attention::flash_tile_rows(tile_, d);
      const std::int64_t blocks = tiles * a_.B * a_.Hkv;
      if (blocks > lim) BWPROF_INVALID("seq_q: batch*kv_heads*row tiles beyond 2^31-1 on the GPU");
      // Split the keys while the blocks do not fill two rounds of the GPU (2-3 blocks an SM fit),
      // each split keeping at least 4 key tiles.
      const int keys = attention::flash_tile_keys(tile_, d);
      if (blocks < 4 * sms)
        splits = std::min<std::int64_t>({(4 * sms + blocks - 1) / blocks, (a_.Skv + 4 * keys - 1) / (4 * keys), 65535});
      split_len_ = static_cast<int>(((a_.Skv + splits - 1) / splits + keys - 1) / keys * keys);
    } else if (kernel_ == Kernel::kDecode) {
      // Decode reads each key and value once, so its time is their bytes over the bandwidth plus
      // what every block pays once (its launch, the first loads' latency, the merges). The keys are
      // split so that the blocks make half a wave of the GPU up to head dim 128 (half its blocks an
      // SM, as the runtime reports them, times the SMs; fewer splits to merge: faster than a full wave
      // at 10 of 12 H100 points, e.g. B1 H32/8 S8192 D64 18.7 against 21.4 us, B16 H32/8 S4096 D128
      // 97.4 against 104.4; 3% slower at B4 H64/8 S16384 D64) and a whole wave at head dim 256 (faster
      // at 7 of 8 points of the H100 decode sweep, e.g. B16 H8/1 S2048 24.5 against 27.9 us, paged B1
      // H32/4 S16384 42.3 against 48.4; the eighth even), each split keeping at least 128 keys, in
      // steps of 16 (a warp's step). Paged K/V: a whole wave at every head dim, each split keeping at
      // least 256 keys (H200, 2026-11-28, harness grid at 24 paged points: long streams gain, e.g.
      // fp16 B4 H64/8 S16384 D64 pages of 16 65.6 -> 44.5 us, B8 H32/8 S8192 D128 88.0 -> 77.8,
      // bf16 B16 H32/8 S4096 D128 91.7 -> 77.7; the shortest splits lose: B2 H32/4 S4096 D96, 128 keys
      // a split, 14.7 -> 15.7, hence the floor). BWPROF_ATTN_DECODE_WAVES=n asks for n waves (a benchmark knob).
      // BWPROF_ATTN_DECODE_STAGES=n: each warp's ring n steps of 16 keys deep (2-8; the default by
      // head dim: 5 at 64, 3 up to 128 (at 80: 4 up to 8192 keys, 2 beyond), 2 at 256: gpu.hpp;
      // shallower where nothing is split, below),
      // BWPROF_ATTN_DECODE_SPLITS=n: n splits (as far
      // as the keys in steps of 16 and the merge allow); knobs for benchmarks. WAVES may be a
      // fraction (0.5: half a wave, fewer splits to merge).
      const std::int64_t blocks = a_.B * a_.Hkv;
      if (blocks > lim) BWPROF_INVALID("batch*kv_heads: beyond 2^31-1 on the GPU");
      l_.decode_stages = static_cast<int>(knob_int("BWPROF_ATTN_DECODE_STAGES", 2, attention::kDecodeStagesMax).value_or(0));
      const Resources r = dispatch(false);
      if (r.runtime_blocks_per_sm < 1)
        BWPROF_INVALID("BWPROF_ATTN_DECODE_STAGES: a ring that deep does not fit this GPU's shared memory");
      const std::int64_t per_sm = r.runtime_blocks_per_sm;
      double waves = a_.D > 128 || host_.paged ? 1.0 : 0.5;
      const std::int64_t least = host_.paged ? 256 : 128;  // keys a split keeps
      waves = std::max(0.05, knob_number("BWPROF_ATTN_DECODE_WAVES", 0, 64).value_or(waves));
      const std::int64_t slots = std::max<std::int64_t>(1, static_cast<std::int64_t>(waves * per_sm * sms));
      const std::int64_t rows = a_.Sq * group_;
      constexpr int step = attention::kDecodeStepKeys;  // a warp's step: splits are whole steps
      const std::int64_t most = std::min<std::int64_t>({(a_.Skv + step - 1) / step, attention::kDecodeMaxMerge / rows, 65535});
      splits = std::min<std::int64_t>({std::max<std::int64_t>(1, slots / blocks), (a_.Skv + least - 1) / least, most});
      if (const auto n = knob_int("BWPROF_ATTN_DECODE_SPLITS", 1, 65535))
        splits = std::min<std::int64_t>(*n, std::max<std::int64_t>(1, most));
      split_len_ = static_cast<int>(((a_.Skv + splits - 1) / splits + step - 1) / step * step);
      // Nothing split: the ring that keeps the SMs' bytes in flight near what they need (gpu.hpp).
      if (l_.decode_stages == 0 && splits == 1)
        l_.decode_stages = attention::decode_unsplit_ring(static_cast<int>(a_.D), a_.Skv, blocks, sms,
                                                          g_.info().bandwidth_theoretical_gbs);
    } else if (kernel_ == Kernel::kRows) {
      G_ = group_ % 8 == 0 ? 8 : group_ % 4 == 0 ? 4 : group_ % 2 == 0 ? 2 : 1;
      if (a_.D > 128) G_ = std::min(G_, 4);  // q and o of 8 heads of 256 would not fit the registers
      const std::int64_t blocks = a_.B * a_.Hkv * (group_ / G_) * a_.Sq;
      const std::int64_t want = 8ll * sms;
      if (blocks < want) splits = std::min<std::int64_t>((want + blocks - 1) / blocks, (a_.Skv + 127) / 128);
      split_len_ = static_cast<int>((a_.Skv + std::max<std::int64_t>(splits, 1) - 1) / std::max<std::int64_t>(splits, 1));
    }
    if (kernel_ != Kernel::kWgmma) {
      // The partial rows stay within kMaxPartialRows (the family's footprint counts on it).
      const std::int64_t cap = std::max<std::int64_t>(1, kMaxPartialRows / rows_all);
      if ((a_.Skv + split_len_ - 1) / split_len_ > cap) {
        const int step = kernel_ == Kernel::kFlash ? attention::flash_tile_keys(tile_, static_cast<int>(a_.D))
                                                   : kernel_ == Kernel::kDecode ? attention::kDecodeStepKeys : 1;
        split_len_ = static_cast<int>(((a_.Skv + cap - 1) / cap + step - 1) / step * step);
      }
      splits_ = static_cast<int>((a_.Skv + split_len_ - 1) / split_len_);
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

 private:
  enum class Kernel { kRows, kFlash, kDecode, kWgmma };

  // FP32 (and every GPU without NVIDIA's matrix units): rows. FP16/BF16 on sm_80+: decode where a
  // KV head has at most 32 query rows (16 at head dim 256), the Hopper kernel where every head has
  // a whole tile of 128 query positions or more and it takes the layout, flash otherwise.
  // BWPROF_ATTN_KERNEL=rows|flash|decode|wgmma asks for one (a knob for benchmarks; an error where
  // that kernel cannot take the problem).
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
    const std::vector<std::string> names = {"rows", "flash", "decode", "wgmma"};
    if (const auto want = knob_choice("BWPROF_ATTN_KERNEL", names)) {
      const Kernel kinds[] = {Kernel::kRows, Kernel::kFlash, Kernel::kDecode, Kernel::kWgmma};
      const bool takes[] = {true, flash_ok, decode_ok, wgmma_ok};
      if (!takes[*want])
        BWPROF_INVALID("BWPROF_ATTN_KERNEL=" + names[*want] + ": not a kernel that takes this problem here");
      k = kinds[*want];
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
