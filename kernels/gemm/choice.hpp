// The `tensor` GEMM's choices that are plain arithmetic on the shape, shared by dispatch.hip (which
// engine runs) and family.cpp (the footprint of what it allocates), so that the two agree; no GPU
// headers, the CPU-only build compiles it too.
#pragma once
#include <algorithm>
#include <cstdint>

namespace bwprof {
namespace gemm {

// A few rows of A (M <= kSmallRows): the GEMM is reading B, whatever its size (at most 32 flops a
// 2-byte element of B, far under the matrix units' ~300 flops a byte of DRAM bandwidth on an H100),
// so the NVIDIA dispatch takes a kernel built around B's stream (small_m_mma says which). Measured on
// an H100 (gemm_sweep.py --max-m 64, round 1 of session 6, us; fp16 unless said):
//   rows on 16 bytes (N, K multiples of 8): mma.sync's 16-row tile (mma_sm80.hip) beats the skinny
//     tensor kernel at M = 2..16: 4096^2 19.6 / 20.1 / 20.2 / 22.7 against 21.7 / 22.3 / 25.7 / 32.8
//     (M = 2, 3, 7, 16), N = 1000 K = 11008 15.9 / 15.1 / 16.2 / 18.2 against 16.5-28.4; at M = 1
//     it ties the vector-unit kernel (N = 1000: 15.2 vs 15.1, bf16 14.9 vs 15.0) or wins (4096^2:
//     19.5 vs 21.2). Rows off 16 bytes: mma.sync reads them 2-5x slower (M = 2 N = 11007: 228.7).
//   rows off 16 bytes: the skinny tensor kernel (skinny_mma.hip) beats the vector-unit one at M = 1
//     too (N = 4095 K = 4097: 20.8 vs 23.8, N = 11009 K = 1000: 16.9 vs 19.7, N = 11007 K = 4096:
//     45.1 vs 50.7) and the previous rule at M = 2..16 (M = 16 N = 4097 K = 4095: 31 vs 54).
//   M = 17..64 (M = 33): the skinny tensor kernel (64-row tile) loses to wgmma / mma.sync everywhere
//     (4096^2: 49.8 vs 18.1; N = 1000 K = 11008: 36.9 vs 22.5), so it stops at kSmallRows = 16 rows;
//     past that the general rules run. It still takes up to kSmallMaxRows on request
//     (BWPROF_GEMM_TILE=tc_skinny), and the vector-unit skinny kernel (skinny.hip), which no
//     default rule takes any more, up to kSkinnyMaxRows (BWPROF_GEMM_TILE=gemv).
constexpr int kSkinnyMaxRows = 64, kSmallRows = 16, kSmallMaxRows = 64;
// a_aligned / b_aligned: A's and B's rows start on 16 bytes (leading dimension a multiple of 8
// two-byte elements, base on 16 bytes) and K, N multiples of 8 (mma.sync's vector path).
inline bool small_m_mma(bool a_aligned, bool b_aligned) { return a_aligned && b_aligned; }

// A leading dimension padded so that rows start on 16 bytes (8 two-byte elements).
inline std::int64_t pad_ld(std::int64_t n) { return (n + 7) / 8 * 8; }
// The split-K FP32 accumulator's row stride (split_k.hip): N rounded up to 4 floats, so that every
// row starts on 16 bytes and mma.sync adds its partial sums four columns a vector reduction.
// Host and device (constexpr).
constexpr std::int64_t split_acc_ld(std::int64_t n) { return (n + 3) / 4 * 4; }

// Whether copying the misaligned operands into padded scratch (pad.hip) and running wgmma on the
// copies beats running mma.sync on them in place, by estimates in microseconds on an H100:
//   pad    bytes read and written by the copies at 2.5 TB/s, plus 3 us a copy launch;
//   wgmma  the longer of its FLOPs at 400 TFLOP/s and its operands at 2.8 TB/s;
//   mma    where A and B start on 16 bytes (`realign`: mma_sm80.hip's windows realigned in shared
//          memory), the longer of its FLOPs at 40 TFLOP/s and its operands at 1.0 TB/s; otherwise
//          (rows loaded through registers) at 55 TFLOP/s and 0.4 TB/s.
// Measured on an H100 (2026-11-28, fp16, us, in place -> padded): M=17 N=4097 K=4095 32.1 -> 43.5,
// M=33 N=4095 K=4097 36.9 -> 42.4, M=33 N=11007 K=4096 73.5 -> 109.4, M=48 N=4097 K=4095 40.8, M=64
// N=4095 K=4097 45.6 -> 43.2, M=96 61.7 -> 53.4, M=128 N=4097 K=4095 66.4 -> 47.4, M=64 N=11009 K=1000
// 42.7 -> 31.8, M=33 N=1000 K=11007 (A alone copied) 31.3 -> 19.3, M=8192 N=4097 K=4095 2753 -> 751;
// through registers M=33 N=4095 K=4097 80.9, M=8192 5049. The estimates pick the faster at each.
// Pad where pad + wgmma < mma. pad_a / pad_b: which operands need the copy.
inline double pad_us(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b) {
  const double a = pad_a ? 4.0 * M * K : 0.0, b = pad_b ? 4.0 * K * N : 0.0;
  return (a + b) / 2.5e6 + 3.0 * (int(pad_a) + int(pad_b));
}
// A GEMM's FLOPs, and the bytes of its 2-byte operands and output read and written once.
inline double gemm_flops(std::int64_t M, std::int64_t N, std::int64_t K) { return 2.0 * M * N * K; }
inline double gemm_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  return 2.0 * (double(M) * K + double(K) * N + double(M) * N);
}
inline double wgmma_us(std::int64_t M, std::int64_t N, std::int64_t K) {
  return std::max(gemm_flops(M, N, K) / 400e6, gemm_bytes(M, N, K) / 2.8e6);
}
inline double mma_unaligned_us(std::int64_t M, std::int64_t N, std::int64_t K, bool realign) {
  const double flops = gemm_flops(M, N, K), bytes = gemm_bytes(M, N, K);
  return realign ? std::max(flops / 40e6, bytes / 1.0e6) : std::max(flops / 55e6, bytes / 0.4e6);
}
inline bool pad_pays(std::int64_t M, std::int64_t N, std::int64_t K, bool pad_a, bool pad_b, bool realign) {
  if (!pad_a && !pad_b) return false;
  return pad_us(M, N, K, pad_a, pad_b) + wgmma_us(M, N, K) < mma_unaligned_us(M, N, K, realign);
}

// From kPad128Rows rows on wgmma (Hopper): operands whose rows are not a multiple of 128 bytes (the
// copy engine's swizzle line; a 2000-byte row of B at N = 1000 straddles lines) are copied into
// 128-byte rows (pad.hip, 64 elements) where the copies cost little against the GEMM: where the
// copies' estimate (pad_us) beyond those that rows off 16 bytes need anyway (need_a / need_b) is
// under half wgmma's estimate (wgmma_us). a128 / b128: which operands' rows are off 128 bytes.
// Measured on an H100 (gemm_sweep.py --large, session 6 round 1, fp16, us; chosen -> 128-byte rows):
//   N = 1000 K = 11008: M = 1000 63.0 -> 54.7 (copy 20.6 against wgmma 55: pads), M = 4096 190.4 ->
//   139.7, M = 8192 387.2 -> 276.1; M = 128 32.2 against 24.1 in place (copy 20.6 against 8.9: no);
//   M = 128 N = 4097 K = 4095 (both copied to 16-byte rows anyway: no extra copy) 53.2 -> 48.8.
// Where B alone is off 128 bytes (its rows on 16 bytes) from kMulticastRows rows, the alternative to
// the copy is wgmma on B in place with clusters of two blocks along M that share each stage of B
// (multicast_b): each block reads half of it, so the rows that straddle 128-byte lines cost half
// as many reads. Measured on an H100 (2026-11-28, harness, fp16, us; copy of B to 128-byte rows ->
// in place, one block -> in place, clusters): N = 1000 K = 11008: M = 256 31.5 (no copy) -> 31.6
// -> 26.8, M = 512 37.2 (no copy) -> 37.3 -> 31.2, M = 1000 57.1 -> 62.5 -> 48.5 (bf16 57.0 -> 62.2
// -> 48.6), M = 2048 86.4 -> 102.7 -> 82.1, M = 4096 142.1 -> 188.5 -> 147.5, M = 8192 281.5 -> 391.9
// -> 288.0; M = 1000 N = 3000 K = 4096 64.8 -> 66.5 -> 57.8, M = 1000 N = 5000 K = 4096 142.8 ->
// 127.7 -> 122.1; M = 2048 N = 1000 K = 2048 25.0 -> 25.5 -> 24.4; M = 128 N = 1000 K = 11008 (two
// 64-row tiles) 19.9 in place, 21.6 in clusters (but 20.5 -> 17.6 in two later calls with the
// kernel as committed: below 256 rows, next paragraph). So clusters from 256 rows, and the copy of B only
// where it costs under a tenth of wgmma's estimate (M = 4096 and 8192 above: 20.6 us against 225
// and 451). Where B's rows are on 128 bytes clusters came out mixed (M = 1000 N = 1024 K = 11008
// 40.6 -> 45.0 and 43.6 -> 48.6 in two calls, 4096^3 213 -> 208 and 214 -> 233, M = 256 N = 4096
// K = 4096 25.4 -> 22.3), so they stay off there for now.
// Below kMulticastRows (from kPad128Rows rows), one call over M = 128, 160, 192, 224, 255 and the
// sweep's N and K (us, one block -> clusters, whatever B's alignment): where the row tiles pair up
// clusters won almost everywhere (M = 128 N = 1000 K = 11008 20.4 -> 17.0, N = 4096 K = 4096 20.9 ->
// 18.1, on 16-byte copies N = 4095 K = 4097 46.2 -> 44.5; M = 224 N = 1000 K = 11008 31.7 -> 23.3,
// N = 4096 K = 4096 25.7 -> 23.1, N = 11007 K = 4096 148.3 -> 138.8; lost by 1-2 %: M = 160 N = 4096
// K = 4096 28.9 -> 29.3, N = 4097 K = 4095 56.3 -> 57.1, M = 224 N = 11009 K = 1000 49.0 -> 50.1);
// on an odd number of row tiles the last pair's second block lies past M and they mostly lost (M =
// 128 on one 128-row tile N = 11007 K = 4096 113.8 -> 131.0, N = 11009 K = 1000 37.3 -> 42.6; M =
// 160 on three 64-row tiles N = 1000 K = 11008 26.8 -> 28.3, N = 11009 K = 1000 43.5 -> 47.4; won
// at N = 11007 K = 4096 153.3 -> 149.7). So there: clusters where the row tiles pair up.
constexpr int kPad128Rows = 128, kMulticastRows = 256;
inline bool multicast_b(std::int64_t M, bool b128) { return b128 && M >= kMulticastRows; }
// Whether wgmma runs in clusters (wgmma_sm90.hip), given B's rows off 128 bytes (b128) and the
// number of row tiles of the chosen tile.
inline bool clusters_pay(std::int64_t M, bool b128, std::int64_t row_tiles) {
  if (M >= kMulticastRows) return multicast_b(M, b128);
  return M >= kPad128Rows && row_tiles % 2 == 0;
}
// Rows of a 16-bit matrix at `p` with leading dimension `ld` that do not all start on 128 bytes.
inline bool rows_off128(const void* p, std::int64_t ld) {
  return ld % 64 != 0 || reinterpret_cast<std::uintptr_t>(p) % 128 != 0;
}
inline bool pad128_pays(std::int64_t M, std::int64_t N, std::int64_t K, bool need_a, bool need_b, bool a128,
                        bool b128) {
  if (M < kPad128Rows || (!a128 && !b128)) return false;
  const double extra = pad_us(M, N, K, a128, b128) - pad_us(M, N, K, need_a, need_b);
  if (!a128 && !need_b && multicast_b(M, b128)) return extra < 0.1 * wgmma_us(M, N, K);
  return extra < 0.5 * wgmma_us(M, N, K);
}

// The scratch the copies take, in bytes, where the GEMM of a family instance (lda = K, ldb = N,
// buffers on 16 bytes: mma.sync realigns in place) would pad; 0 where it would not (dispatch.hip's rules).
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
// most kWgmmaMaxSplits blocks a tile, each at least 4 steps of 64 along K. The splits meet by
// slots (each but the last its own copy of the sums: splits - 1 copies) unless those would pass
// kWgmmaSlotsMaxBytes (then one copy, the chain).
constexpr int kWgmmaMaxSplits = 32;
constexpr double kWgmmaSlotsMaxBytes = 64.0 * (1 << 20);
inline double wgmma_split_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  const double sums = 4.0 * double((M + 127) / 128 * 128) * double((N + 255) / 256 * 256);
  const std::int64_t splits = std::min<std::int64_t>(kWgmmaMaxSplits, std::max<std::int64_t>(1, (K + 63) / 64 / 4));
  const double slots = sums * double(splits - 1);
  return (slots <= kWgmmaSlotsMaxBytes ? std::max(sums, slots) : std::max(sums, kWgmmaSlotsMaxBytes)) +
         4.0 * double((M + 63) / 64) * double((N + 63) / 64);
}

// ---- The dispatch's answers as functions of the shape and the device (GPU-free, so that the CPU
// tests check them: tests/cpp/gemm_rules_test.cpp) -------------------------------------------------

// What the rules read of one GEMM's operands: sizes, leading dimensions and where A and B start.
struct Operands {
  std::int64_t M, N, K, lda, ldb, ldc;
  bool a16, b16;    // A's / B's first element on 16 bytes
  bool a128, b128;  // ... on 128 bytes
};
// Rows the copy engine addresses (tma_addressable), and rows not all on 128 bytes (rows_off128).
inline bool tma_rows(bool base16, std::int64_t ld) { return base16 && ld % 8 == 0; }
inline bool off128_rows(bool base128, std::int64_t ld) { return ld % 64 != 0 || !base128; }

// Which kernel the `tensor` GEMM runs on NVIDIA (dispatch.hip). wgmma: this device and build take it.
// kAuto: none asked for (the rules choose).
enum class Engine { kSkinnyMma, kMma, kWgmma, kPadded16, kPadded128, kAuto };
// asked: kSkinnyMma, kMma, kWgmma (in place or on copies padded to 16 or 128 bytes, as the rules
// say) or kAuto. wgmma: this device and build take it.
inline Engine tensor_engine(const Operands& o, bool wgmma, Engine asked = Engine::kAuto) {
  if (asked == Engine::kSkinnyMma || asked == Engine::kMma) return asked;
  const bool want_wgmma = asked == Engine::kWgmma;
  if (!want_wgmma && o.M <= kSmallRows) {
    const bool a_aligned = o.K % 8 == 0 && tma_rows(o.a16, o.lda), b_aligned = o.N % 8 == 0 && tma_rows(o.b16, o.ldb);
    return small_m_mma(a_aligned, b_aligned) && o.ldc % 2 == 0 ? Engine::kMma : Engine::kSkinnyMma;
  }
  const bool need_a = !tma_rows(o.a16, o.lda), need_b = !tma_rows(o.b16, o.ldb), realign = o.a16 && o.b16;
  if (o.M >= kPad128Rows && wgmma) {
    const bool w = (!need_a && !need_b) || want_wgmma || pad_pays(o.M, o.N, o.K, need_a, need_b, realign);
    if (w && pad128_pays(o.M, o.N, o.K, need_a, need_b, off128_rows(o.a128, o.lda), off128_rows(o.b128, o.ldb)))
      return Engine::kPadded128;
  }
  if (wgmma) {
    if (!need_a && !need_b) return Engine::kWgmma;
    if (want_wgmma || pad_pays(o.M, o.N, o.K, need_a, need_b, realign)) return Engine::kPadded16;
  }
  return Engine::kMma;
}

// mma.sync (mma_sm80.hip): its tiles (rows x columns of a block, pipeline stages) and how rows reach
// shared memory (mma_sm80_kernel.hpp's kLoadAsync, kLoadRealign, kLoadRegs).
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

// wgmma (wgmma_sm90.hip): the tile and K split of least estimated time, and clusters.
struct WgmmaTile {
  int bm, bn;
  double tflops;  // the tile's rate at 4096^3 on an H100
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
// tile / splits: asked for (-1, 0: the rules').
inline WgmmaPlan wgmma_plan(std::int64_t M, std::int64_t N, std::int64_t K, bool b_off128, std::int64_t sms,
                            int tile = -1, std::int64_t splits_asked = 0) {
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
      const double block_us = 2.0 * o.bm * o.bn * 64 * steps / (o.tflops * 1e6 / sms);
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

// The skinny tensor kernel (skinny_mma.hip): 8-row groups of A (mt), and its K split.
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
// runs; up to kSmallRows rows the skinny kernels' FP32 accumulator [M, split_acc_ld(N)] and their tile counters
// (skinny.hip: one int per 8 rows x 248 columns or more; skinny_mma.hip: one per 128 columns;
// mma.sync's 16-row tile: one per 128 columns), else the larger of mma.sync's accumulator
// with its tile counters (one per 64 x 64 or more) and wgmma's tile sums with theirs (held where
// K is split: counted always; wgmma's are the larger); plus the padded copies (which wgmma reads).
inline double tensor_scratch_bytes(std::int64_t M, std::int64_t N, std::int64_t K) {
  if (M <= kSmallRows)
    return 4.0 * M * split_acc_ld(N) + 4.0 * double(std::max((M + 7) / 8 * ((N + 247) / 248), (N + 127) / 128));
  return std::max(4.0 * M * split_acc_ld(N), wgmma_split_bytes(M, N, K)) + pad_scratch_bytes(M, N, K);
}

}  // namespace gemm
}  // namespace bwprof
