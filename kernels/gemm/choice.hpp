// The `tensor` GEMM's rules: which NVIDIA kernel runs, with which tile and K split, and the scratch
// it allocates. Plain arithmetic on the shape and the device's figures, shared by dispatch.hip and the
// engines (what runs) and family.cpp (the footprint), so that they agree; no GPU headers, so that the
// CPU tests check every answer (tests/cpp/gemm_rules_test.cpp). Each rule: what, then why; the
// measurements behind them are in docs/notes/gemm.md, one section a rule.
#pragma once
#include <algorithm>
#include <cstdint>

namespace bwprof {
namespace gemm {

// The H100 SXM's FP16 matrix peak as the architecture table gives it (4096 FLOP a clock an SM, 132
// SMs, 1980 MHz; GFLOP/s, computed as gpu_backend.cpp computes a device's): the rules' compute rates
// were measured there. matrix_scale: a device's peak against it (1.0 on the H100 SXM and the H200,
// whose SMs and clocks are the same; 1.0 where the peak is unknown).
constexpr double kMeasuredMatrixGflops = 4096 * (132 * 1980.0 * 1e6 / 1e9);
inline double matrix_scale(double device_matrix_gflops) {
  return device_matrix_gflops > 0 ? device_matrix_gflops / kMeasuredMatrixGflops : 1.0;
}

// Up to kSmallRows rows of A, a kernel built around B's stream: the time is reading B (at most 32
// FLOP a byte of it). mma.sync's 16-row tile where A's and B's rows are on 16 bytes (small_m_mma:
// its vector loads), else the skinny tensor kernel, which reads any alignment; it takes up to
// kSmallMaxRows when asked (engine=skinny), but loses to wgmma and mma.sync past 16.
constexpr int kSmallRows = 16, kSmallMaxRows = 64;
inline bool small_m_mma(bool a_aligned, bool b_aligned) { return a_aligned && b_aligned; }

// A leading dimension padded so that rows start on 16 bytes (8 two-byte elements).
inline std::int64_t pad_ld(std::int64_t n) { return (n + 7) / 8 * 8; }
// The split-K FP32 accumulator's row stride (split_k.hip): N rounded up to 4 floats, so that every
// row starts on 16 bytes and mma.sync adds its partial sums four columns a vector reduction.
// Host and device (constexpr).
constexpr std::int64_t split_acc_ld(std::int64_t n) { return (n + 3) / 4 * 4; }

// Operands whose rows are off 16 bytes are copied into padded rows for wgmma (pad.hip) where the
// copies and wgmma take less than mma.sync on the rows in place: the estimates (us) below, fitted on
// an H100 (the compute rates scale with the device's matrix peak; the DRAM rates, 2.5 and 2.8 TB/s,
// stay the H100's until measured on another GPU: docs/notes/gemm.md). pad_a / pad_b: which need it;
// realign: mma.sync realigns rows in shared memory (A and B start on 16 bytes), else registers.
inline double pad_us(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b) {
  const double a = pad_a ? 4.0 * M * K : 0.0, b = pad_b ? 4.0 * K * N : 0.0;
  return (a + b) / 2.5e6 + 3.0 * (int(pad_a) + int(pad_b));
}
// A GEMM's FLOPs, and the bytes of its 2-byte operands and output read and written once.
inline double gemm_flops(std::int64_t M, std::int64_t N, std::int64_t K) { return 2.0 * M * N * K; }
inline double gemm_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  return 2.0 * (double(M) * K + double(K) * N + double(M) * N);
}
inline double wgmma_us(std::int64_t M, std::int64_t N, std::int64_t K, double scale = 1.0) {
  return std::max(gemm_flops(M, N, K) / (400e6 * scale), gemm_bytes(M, N, K) / 2.8e6);
}
inline double mma_unaligned_us(std::int64_t M, std::int64_t N, std::int64_t K, bool realign, double scale = 1.0) {
  const double flops = gemm_flops(M, N, K), bytes = gemm_bytes(M, N, K);
  return realign ? std::max(flops / (40e6 * scale), bytes / (1.0e6 * scale))
                 : std::max(flops / (55e6 * scale), bytes / (0.4e6 * scale));
}
inline bool pad_pays(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b, bool realign,
                     double scale = 1.0) {
  if (!pad_a && !pad_b) return false;
  return pad_us(M, N, K, pad_a, pad_b) + wgmma_us(M, N, K, scale) < mma_unaligned_us(M, N, K, realign, scale);
}

// From kPad128Rows rows on wgmma, operands whose rows are off 128 bytes (the copy engine's swizzle
// line) are copied into 128-byte rows where the copies beyond those rows off 16 bytes need anyway
// cost under half wgmma's estimate; where B alone is off 128 bytes from kMulticastRows rows, under a
// tenth, since clusters of two blocks sharing each stage of B (multicast_b) read it in place for
// half the cost. Below kMulticastRows, clusters where the chosen tile's row tiles pair up (an odd
// one's second block lies past M and mostly lost). a128 / b128: which operands' rows are off 128 bytes.
constexpr int kPad128Rows = 128, kMulticastRows = 256;
inline bool multicast_b(std::int64_t M, bool b128) { return b128 && M >= kMulticastRows; }
inline bool clusters_pay(std::int64_t M, bool b128, std::int64_t row_tiles) {
  if (M >= kMulticastRows) return multicast_b(M, b128);
  return M >= kPad128Rows && row_tiles % 2 == 0;
}
// Rows of a 16-bit matrix at `p` with leading dimension `ld` that do not all start on 128 bytes.
inline bool rows_off128(const void* p, std::int64_t ld) {
  return ld % 64 != 0 || reinterpret_cast<std::uintptr_t>(p) % 128 != 0;
}
inline bool pad128_pays(std::int64_t M, std::int64_t N, std::int64_t K, bool need_a, bool need_b, bool a128,
                        bool b128, double scale = 1.0) {
  if (M < kPad128Rows || (!a128 && !b128)) return false;
  const double extra = pad_us(M, N, K, a128, b128) - pad_us(M, N, K, need_a, need_b);
  if (!a128 && !need_b && multicast_b(M, b128)) return extra < 0.1 * wgmma_us(M, N, K, scale);
  return extra < 0.5 * wgmma_us(M, N, K, scale);
}

// The scratch the copies take, in bytes, where the GEMM of a family instance (lda = K, ldb = N,
// buffers on 16 bytes: mma.sync realigns in place) would pad by the rules at the H100's rates
// (scale 1); 0 where it would not.
inline double pad_scratch_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  const bool pad_a = K % 8 != 0, pad_b = N % 8 != 0;
  if (M <= kSmallRows) return 0.0;
  const bool pad16 = pad_pays(M, N, K, pad_a, pad_b, true), wgmma = (!pad_a && !pad_b) || pad16;
  const bool a128 = K % 64 != 0, b128 = N % 64 != 0;
  if (wgmma && pad128_pays(M, N, K, pad_a, pad_b, a128, b128))
    return (a128 ? 2.0 * M * ((K + 63) / 64 * 64) : 0.0) + (b128 ? 2.0 * K * ((N + 63) / 64 * 64) : 0.0);
  if (!pad16) return 0.0;
  return (pad_a ? 2.0 * M * pad_ld(K) : 0.0) + (pad_b ? 2.0 * K * pad_ld(N) : 0.0);
}

// wgmma's split K (wgmma_sm90.hip): FP32 sums for every output tile (the tiles cover at most M and
// N rounded up to 128 and 256) and a counter a tile (at most one per 64 x 64), where it splits; at
// most kWgmmaMaxSplits blocks a tile by the rules (each at least 4 steps of 64 along K), or the
// splits asked for. The splits meet by slots (each but the last its own copy of the sums: splits - 1
// copies) unless those would pass kWgmmaSlotsMaxBytes (then one copy, the chain).
constexpr int kWgmmaMaxSplits = 32;
constexpr double kWgmmaSlotsMaxBytes = 64.0 * (1 << 20);
inline double wgmma_split_bytes(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t splits_asked = 0) {
  const double sums = 4.0 * double((M + 127) / 128 * 128) * double((N + 255) / 256 * 256);
  std::int64_t splits = std::min<std::int64_t>(kWgmmaMaxSplits, std::max<std::int64_t>(1, (K + 63) / 64 / 4));
  if (splits_asked) splits = std::max(splits, std::min<std::int64_t>(splits_asked, (K + 63) / 64));
  const double slots = sums * double(splits - 1);
  return (slots <= kWgmmaSlotsMaxBytes ? std::max(sums, slots) : std::max(sums, kWgmmaSlotsMaxBytes)) +
         4.0 * double((M + 63) / 64) * double((N + 63) / 64);
}

// ---- What runs: the dispatch's answers from the shape, the operands and the device -----------

// What the rules read of one GEMM's operands: sizes, leading dimensions and where A and B start.
struct Operands {
  std::int64_t M, N, K, lda, ldb, ldc;
  bool a16, b16;    // A's / B's first element on 16 bytes
  bool a128, b128;  // ... on 128 bytes
};
// Rows the copy engine addresses (tma_addressable), and rows not all on 128 bytes (rows_off128).
inline bool tma_rows(bool base16, std::int64_t ld) { return base16 && ld % 8 == 0; }
inline bool off128_rows(bool base128, std::int64_t ld) { return ld % 64 != 0 || !base128; }

// Which kernel the `tensor` GEMM runs on NVIDIA (dispatch.hip): up to kSmallRows rows a kernel
// built around B (above); then wgmma where this device and build take it (`wgmma`), on copies
// padded to 128-byte rows where pad128_pays, in place where the copy engine addresses A and B, on
// copies padded to 16-byte rows where pad_pays; else mma.sync, which reads any alignment in place.
// asked: kSkinnyMma, kMma, kWgmma (the engine parameter; wgmma then in place or on copies as the
// rules say) or kAuto (none). scale: matrix_scale of the device.
enum class Engine { kSkinnyMma, kMma, kWgmma, kPadded16, kPadded128, kAuto };
inline Engine tensor_engine(const Operands& o, bool wgmma, Engine asked = Engine::kAuto, double scale = 1.0) {
  if (asked == Engine::kSkinnyMma || asked == Engine::kMma) return asked;
  const bool want_wgmma = asked == Engine::kWgmma;
  if (!want_wgmma && o.M <= kSmallRows) {
    const bool a_aligned = o.K % 8 == 0 && tma_rows(o.a16, o.lda), b_aligned = o.N % 8 == 0 && tma_rows(o.b16, o.ldb);
    return small_m_mma(a_aligned, b_aligned) && o.ldc % 2 == 0 ? Engine::kMma : Engine::kSkinnyMma;
  }
  const bool need_a = !tma_rows(o.a16, o.lda), need_b = !tma_rows(o.b16, o.ldb), realign = o.a16 && o.b16;
  if (o.M >= kPad128Rows && wgmma) {
    const bool w = (!need_a && !need_b) || want_wgmma || pad_pays(o.M, o.N, o.K, need_a, need_b, realign, scale);
    if (w && pad128_pays(o.M, o.N, o.K, need_a, need_b, off128_rows(o.a128, o.lda), off128_rows(o.b128, o.ldb), scale))
      return Engine::kPadded128;
  }
  if (wgmma) {
    if (!need_a && !need_b) return Engine::kWgmma;
    if (want_wgmma || pad_pays(o.M, o.N, o.K, need_a, need_b, realign, scale)) return Engine::kPadded16;
  }
  return Engine::kMma;
}

// mma.sync (mma_sm80.hip): its tiles (rows x columns of a block, warps' rows x columns, pipeline
// stages) and how rows reach shared memory (mma_sm80_kernel.hpp's kLoadAsync, kLoadRealign, kLoadRegs).
struct MmaTileShape {
  int bm, bn, wm, wn, stages;
};
constexpr MmaTileShape kMma128x128{128, 128, 64, 32, 3}, kMma64x64{64, 64, 32, 32, 3}, kMma16x128{16, 128, 16, 32, 4};
constexpr int kMmaStepK = 64;
enum MmaLoad : int { kMmaAsync = 0, kMmaRealign = 1, kMmaRegs = 2 };
// A block's shared memory (MmaConfig::kSmemBytes): the stages, one more where rows are realigned.
constexpr int mma_smem_bytes(const MmaTileShape& t, int load) {
  return (load == kMmaRealign ? t.stages + 1 : t.stages) * (t.bm * (kMmaStepK + 8) + kMmaStepK * (t.bn + 8)) * 2;
}
struct MmaPlan {
  MmaTileShape tile;
  int load;
  int splits, split_len;  // K split over `splits` blocks of split_len (a multiple of 64)
  bool fits = true;       // false: the tile asked for does not fit the GPU's shared memory
};
// mma.sync's plan: 16x128 up to 16 rows, 128x128 where its grid fills the GPU (ahead of 128x256 and
// 64x64 at 4096^3), else 64x64; rows off 16 bytes realigned in shared memory where A and B start on
// 16 bytes and it fits, else through registers, and a tile that does not fit gives way to 64x64.
// K split until about two blocks an SM, each split at least 4 steps of 64; the 64x64 tile as many
// ways as one wave of resident blocks holds (a second wave cost more than the splits saved).
// smem_optin: the most shared memory a block may take; small_per_sm(load): blocks of the 64x64 tile
// with that load an SM holds (the runtime's answer, 0 unknown). tile / splits: asked for (null, 0:
// the rules').
template <class PerSm>
MmaPlan mma_plan(const Operands& o, std::int64_t sms, int smem_optin, PerSm small_per_sm,
                 const MmaTileShape* tile = nullptr, std::int64_t splits_asked = 0) {
  MmaPlan p{};
  const bool aligned = o.K % 8 == 0 && o.N % 8 == 0 && o.lda % 8 == 0 && o.ldb % 8 == 0 && o.ldc % 2 == 0;
  const bool bases16 = o.a16 && o.b16;
  p.load = aligned && bases16 ? kMmaAsync : bases16 ? kMmaRealign : kMmaRegs;
  auto tiles = [&](int bm, int bn) { return ((o.M + bm - 1) / bm) * ((o.N + bn - 1) / bn); };
  p.tile = tile ? *tile : o.M <= 16 ? kMma16x128 : tiles(128, 128) >= sms ? kMma128x128 : kMma64x64;
  if (p.load == kMmaRealign && mma_smem_bytes(p.tile, p.load) > smem_optin) p.load = kMmaRegs;
  if (mma_smem_bytes(p.tile, p.load) > smem_optin) {
    if (tile) {
      p.fits = false;
      return p;
    }
    p.tile = kMma64x64;
  }
  const bool small = p.tile.bm == 64;
  const std::int64_t t = tiles(p.tile.bm, p.tile.bn), ksteps = (o.K + 63) / 64;
  std::int64_t want = 2 * sms, splits = 1;
  if (small) {
    const int per_sm = small_per_sm(p.load);
    if (per_sm > 0) want = sms * per_sm;
  }
  const std::int64_t ways = small ? want / t : (want + t - 1) / t;
  if (t < want) splits = std::max<std::int64_t>(1, std::min<std::int64_t>({ways, ksteps / 4, std::int64_t{128}}));
  if (splits_asked) splits = std::min<std::int64_t>(splits_asked, std::min<std::int64_t>(ksteps, 65535));
  p.split_len = static_cast<int>((ksteps + splits - 1) / splits * 64);
  p.splits = static_cast<int>((o.K + p.split_len - 1) / p.split_len);
  return p;
}

// wgmma (wgmma_sm90.hip): the tile and K split of least estimated time (waves of blocks, one an SM,
// times a block's work at its tile's rate, plus the splits' meeting: split_us), and clusters
// (clusters_pay). The tiles' rates were measured at 4096^3 on an H100 and scale with the device's
// matrix peak; the meeting's figures (4 us, and 30 GB/s a split or a link) are those the H100
// sweeps fitted (docs/notes/gemm.md).
struct WgmmaTile {
  int bm, bn;
  double tflops;  // the tile's rate at 4096^3 on an H100 SXM (kMeasuredMatrixGflops)
  const char* name;
};
constexpr WgmmaTile kWgmmaTiles[] = {{128, 256, 647, "128x256"}, {128, 128, 527, "128x128"},
                                     {64, 128, 350, "64x128"}, {64, 64, 282, "64x64"}};
constexpr double kChainGBs = 30, kSlotsGBs = 30, kSplitUs = 4;
inline double split_us(std::int64_t sp, int bm, int bn, bool slots) {
  const double tile = 4.0 * bm * bn;
  return kSplitUs + (slots ? double(sp) * tile / (kSlotsGBs * 1e3) : 2.0 * double(sp - 1) * tile / (kChainGBs * 1e3));
}
struct WgmmaPlan {
  int tile;  // index in kWgmmaTiles
  int splits, split_steps;  // K split over `splits` blocks of split_steps steps of 64
  bool slots;               // the splits meet by slots (else the chain)
  int cluster;              // blocks a cluster along M sharing B's stages (1 or 2)
  std::int64_t tiles;       // output tiles
  double estimate_us;
};
// tile / splits: asked for (-1, 0: the rules'); scale: matrix_scale of the device.
inline WgmmaPlan wgmma_plan(std::int64_t M, std::int64_t N, std::int64_t K, bool b_off128, std::int64_t sms,
                            int tile = -1, std::int64_t splits_asked = 0, double scale = 1.0) {
  WgmmaPlan p{};
  const std::int64_t ksteps = (K + 63) / 64;
  double best = -1;
  for (int i = 0; i < 4; ++i) {
    if (tile >= 0 && tile != i) continue;
    const WgmmaTile& o = kWgmmaTiles[i];
    const std::int64_t tiles = ((M + o.bm - 1) / o.bm) * ((N + o.bn - 1) / o.bn);
    std::int64_t lo = 1, hi = std::min<std::int64_t>(kWgmmaMaxSplits, std::max<std::int64_t>(1, ksteps / 4));
    if (splits_asked) lo = hi = std::min<std::int64_t>(splits_asked, ksteps);
    for (std::int64_t sp = lo; sp <= hi; ++sp) {
      const std::int64_t steps = (ksteps + sp - 1) / sp, sp_real = (ksteps + steps - 1) / steps;
      const double block_us = 2.0 * o.bm * o.bn * 64 * steps / (o.tflops * scale * 1e6 / sms);
      double est = static_cast<double>((tiles * sp_real + sms - 1) / sms) * block_us;
      if (sp_real > 1) est += split_us(sp_real, o.bm, o.bn, true);
      if (best < 0 || est < best) best = est, p.tile = i, p.splits = static_cast<int>(sp_real), p.tiles = tiles;
    }
  }
  const WgmmaTile& t = kWgmmaTiles[p.tile];
  p.estimate_us = best;
  p.split_steps = static_cast<int>((ksteps + p.splits - 1) / p.splits);
  p.splits = static_cast<int>((ksteps + p.split_steps - 1) / p.split_steps);
  p.slots = p.splits > 1 && static_cast<double>(p.tiles) * t.bm * t.bn * 4.0 * (p.splits - 1) <= kWgmmaSlotsMaxBytes;
  p.cluster = clusters_pay(M, b_off128, (M + t.bm - 1) / t.bm) ? 2 : 1;
  return p;
}

// The skinny tensor kernel (skinny_mma.hip): 8-row groups of A (mt), and its K split until the
// blocks fill every SM's resident slots once (the runtime's count at the split's shared memory;
// three rounds settle it), each split whole stages, at least two where K allows, at most A's slice
// in shared memory; half a wave where a wave's splits would be no longer than its pipeline (128
// rows), which then never reaches its steady state.
constexpr int kSkinnyCols = 128, kSkinnyStepK = 32, kSkinnyStages = 4, kSkinnyASmemMax = 48 * 1024;
struct SkinnyPlan {
  int mt;              // 8-row groups of A: 1, 2, 4 or 8
  int splits, split_len;
  double waves;        // of the blocks an SM holds, that the splits fill
};
// per_sm(len): the blocks an SM holds at a split of `len` rows (the runtime's answer, 0 unknown);
// splits_asked: 0, the rules'.
template <class PerSm>
SkinnyPlan skinny_plan(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t sms, PerSm per_sm,
                       std::int64_t splits_asked = 0) {
  SkinnyPlan p{};
  p.mt = M <= 8 ? 1 : M <= 16 ? 2 : M <= 32 ? 4 : 8;
  const std::int64_t tiles = (N + kSkinnyCols - 1) / kSkinnyCols, kKs = kSkinnyStepK;
  const std::int64_t max_len = std::max<std::int64_t>(kKs, (kSkinnyASmemMax / (2 * 8 * p.mt) - 8) / kKs * kKs);
  std::int64_t splits = 1, len = 1;
  auto choose = [&](double w) {
    splits = 1, len = std::min<std::int64_t>(max_len, (K + kKs - 1) / kKs * kKs);
    for (int round = 0; round < 3; ++round) {
      const std::int64_t slots =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(w * std::max(1, per_sm(static_cast<int>(len))) * sms));
      splits = std::min<std::int64_t>((slots + tiles - 1) / tiles, (K + 2 * kKs - 1) / (2 * kKs));
      if (splits_asked) splits = splits_asked;
      splits = std::max<std::int64_t>({splits, 1, (K + max_len - 1) / max_len});
      if (!splits_asked && tiles * splits > slots) {  // past one wave (A's slice caps the split): whole waves
        const std::int64_t n = (tiles * splits + slots - 1) / slots;
        splits = std::max(splits, std::min<std::int64_t>((n * slots + tiles - 1) / tiles, (K + kKs - 1) / kKs));
      }
      len = (K + splits - 1) / splits;
      len = std::min<std::int64_t>(max_len, (len + kKs - 1) / kKs * kKs);
      splits = (K + len - 1) / len;
    }
  };
  p.waves = 1.0;
  choose(p.waves);
  if (!splits_asked && splits > 1 && len <= kSkinnyStages * kKs) choose(p.waves = 0.5);
  p.splits = static_cast<int>(splits);
  p.split_len = static_cast<int>(len);
  return p;
}

// Everything the `tensor` GEMM allocates beside A, B, C and the bias, an upper bound: one engine
// runs; up to kSmallRows rows the accumulator [M, split_acc_ld(N)] and tile counters of the kernels
// built around B (the skinny kernel: one int per 128 columns; mma.sync's 16-row tile: one per 128
// columns; an int per 8 rows x 248 columns counted too, the bound of a kernel since removed), else
// the larger of mma.sync's accumulator with its tile counters (one per 64 x 64 or more) and wgmma's
// tile sums with theirs (held where K is split: counted always; wgmma's are the larger); plus the
// padded copies (which wgmma reads). asked: an engine, tile or split was asked for (the family's
// parameters), so that any engine may run at any M and wgmma may copy rows the rules would not:
// the larger of both bounds, and copies of every operand whose rows are off 128 bytes (at least
// what the 16-byte copies take); splits_asked: `splits`.
inline double tensor_scratch_bytes(std::int64_t M, std::int64_t N, std::int64_t K, bool asked = false,
                                   std::int64_t splits_asked = 0) {
  const double few = 4.0 * M * split_acc_ld(N) + 4.0 * double(std::max((M + 7) / 8 * ((N + 247) / 248), (N + 127) / 128));
  if (M <= kSmallRows && !asked) return few;
  const double sums = std::max(4.0 * M * split_acc_ld(N), wgmma_split_bytes(M, N, K, splits_asked));
  if (!asked) return sums + pad_scratch_bytes(M, N, K);
  const double copies = (K % 64 ? 2.0 * M * ((K + 63) / 64 * 64) : 0.0) + (N % 64 ? 2.0 * K * ((N + 63) / 64 * 64) : 0.0);
  return std::max(few, sums) + copies;
}

}  // namespace gemm
}  // namespace bwprof
