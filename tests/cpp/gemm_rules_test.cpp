// The `tensor` GEMM's dispatch rules (kernels/gemm/choice.hpp) as the NVIDIA dispatch applies them:
// which engine, which mma.sync and wgmma tile and K split, the skinny kernel's split. Examples the
// rules' notes name, and a digest of every answer over a grid of shapes, operand alignments and
// devices: a change of the rules that moves any default answer fails here (the digest was taken from
// the rules as they stood at 03f5f94, written as functions, before their refactoring).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gemm/choice.hpp"
#include "test_util.hpp"

using namespace bwprof::gemm;

namespace {

Operands family(std::int64_t M, std::int64_t N, std::int64_t K) {  // the family's buffers: on 256 bytes, ld = K, N
  return Operands{M, N, K, K, N, N, true, true, true, true};
}

const std::vector<std::int64_t> kMs = {1,   2,   3,   7,   8,   15,  16,  17,  24,   32,   33,   48,   64,   96,  100, 127,
                                       128, 129, 160, 192, 200, 224, 255, 256, 257, 384, 512, 1000, 1024, 2048, 4096, 8192};
const std::vector<std::int64_t> kNKs = {1,    7,    8,    15,   16,   63,   64,   65,    127,   128,  1000,
                                        1024, 1037, 1160, 3000, 4095, 4096, 4097, 11007, 11008, 11009};

// Blocks an SM of the 64x64 mma.sync tile, by load (a stand-in for the runtime's answer).
int fake_small_per_sm(int load) { return load == kMmaRegs ? 2 : 3; }
// Blocks an SM of the skinny kernel at a split of `len` rows (a stand-in, falling with the shared memory).
int fake_skinny_per_sm(int len) { return std::min(16, 233472 / (4 * 32 * 136 * 2 + 16 * len + 1024)); }

}  // namespace

TEST(GemmRules, EngineByRowsAndAlignment) {
  // Up to 16 rows: mma.sync's 16-row tile where A's and B's rows are on 16 bytes, else the skinny kernel.
  EXPECT_EQ(tensor_engine(family(1, 1024, 1536), true), Engine::kMma);
  EXPECT_EQ(tensor_engine(family(16, 1160, 1536), true), Engine::kMma);
  EXPECT_EQ(tensor_engine(family(5, 1024, 1531), true), Engine::kSkinnyMma);
  EXPECT_EQ(tensor_engine(family(16, 1037, 1531), false), Engine::kSkinnyMma);
  // From 17 rows on Hopper: wgmma in place where the copy engine addresses A and B.
  EXPECT_EQ(tensor_engine(family(17, 1160, 1536), true), Engine::kWgmma);
  EXPECT_EQ(tensor_engine(family(4096, 4096, 4096), true), Engine::kWgmma);
  EXPECT_EQ(tensor_engine(family(4096, 4096, 4096), false), Engine::kMma);
  // Rows off 16 bytes: a few rows stay on mma.sync in place, more take padded copies.
  EXPECT_EQ(tensor_engine(family(33, 4095, 4097), true), Engine::kMma);
  EXPECT_EQ(tensor_engine(family(128, 4097, 4095), true), Engine::kPadded128);
  EXPECT_EQ(tensor_engine(family(8192, 4097, 4095), true), Engine::kPadded128);
  // B's rows on 16 bytes but off 128 (N = 1000): from 256 rows clusters share B in place, and B is
  // copied to 128-byte rows only where that costs under a tenth of wgmma (M = 4096).
  EXPECT_EQ(tensor_engine(family(128, 1000, 11008), true), Engine::kWgmma);
  EXPECT_EQ(tensor_engine(family(1000, 1000, 11008), true), Engine::kWgmma);
  EXPECT_EQ(tensor_engine(family(4096, 1000, 11008), true), Engine::kPadded128);
}

TEST(GemmRules, WgmmaTileAndSplitAsMeasured) {
  // Points the measurements name (H100, 132 SMs): 128x128 split 2 at M = N = 1000, K = 11008; 64x64
  // unsplit at M = 128 N = K = 4096 (19.1 us against 23.2 for 64x128 split 2); 128x256 unsplit at 4096^3.
  WgmmaPlan p = wgmma_plan(1000, 1000, 11008, true, 132);
  EXPECT_STREQ(kWgmmaTiles[p.tile].name, "128x128");
  EXPECT_EQ(p.splits, 2);
  EXPECT_TRUE(p.slots);
  EXPECT_EQ(p.cluster, 2);  // B's rows off 128 bytes from 256 rows
  p = wgmma_plan(128, 4096, 4096, false, 132);
  EXPECT_STREQ(kWgmmaTiles[p.tile].name, "64x64");
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.cluster, 2);  // from 128 rows where the row tiles pair up (two of 64)
  p = wgmma_plan(4096, 4096, 4096, false, 132);
  EXPECT_STREQ(kWgmmaTiles[p.tile].name, "128x256");
  EXPECT_EQ(p.splits, 1);
  EXPECT_FALSE(p.slots);
  EXPECT_EQ(p.cluster, 1);
}

TEST(GemmRules, MmaTileAndSplit) {
  // 16 rows: the 16x128 tile, K split until about two blocks an SM.
  MmaPlan p = mma_plan(family(16, 4096, 4096), 132, 232448, fake_small_per_sm);
  EXPECT_EQ(p.tile.bm, 16);
  EXPECT_EQ(p.load, kMmaAsync);
  EXPECT_EQ(p.splits, 8);
  // Rows off 16 bytes on buffers on 16 bytes: realigned in shared memory, the 64x64 tile.
  p = mma_plan(family(33, 4095, 4097), 132, 232448, fake_small_per_sm);
  EXPECT_EQ(p.tile.bm, 64);
  EXPECT_EQ(p.load, kMmaRealign);
  EXPECT_EQ(p.splits, 6);  // 64x64 tiles as many ways as one wave of 3 blocks an SM holds
  // A GPU with 99 KB a block: neither the realigned 128x128 tile nor the one through registers fits,
  // so the 64x64 tile runs, through registers.
  EXPECT_EQ(mma_smem_bytes(kMma128x128, kMmaRealign), 143360);
  EXPECT_EQ(mma_smem_bytes(kMma128x128, kMmaRegs), 107520);
  p = mma_plan(family(8192, 4095, 4097), 132, 232448, fake_small_per_sm);
  EXPECT_EQ(p.tile.bm, 128);
  EXPECT_EQ(p.load, kMmaRealign);
  p = mma_plan(family(8192, 4095, 4097), 132, 101376, fake_small_per_sm);
  EXPECT_EQ(p.tile.bm, 64);
  EXPECT_EQ(p.load, kMmaRegs);
}

TEST(GemmRules, EveryDefaultAnswerOverTheGrid) {
  Digest d;
  const Operands flags[] = {{0, 0, 0, 0, 0, 0, true, true, true, true},   {0, 0, 0, 0, 0, 0, true, true, false, false},
                            {0, 0, 0, 0, 0, 0, false, true, false, true}, {0, 0, 0, 0, 0, 0, true, false, true, false},
                            {0, 0, 0, 0, 0, 0, false, false, false, false}};
  for (std::int64_t M : kMs)
    for (std::int64_t N : kNKs)
      for (std::int64_t K : kNKs)
        for (const Operands& f : flags)
          for (int ld = 0; ld < 2; ++ld) {
            Operands o = f;
            o.M = M, o.N = N, o.K = K;
            o.lda = ld ? K + 8 : K, o.ldb = ld ? N + 64 : N, o.ldc = ld ? N + 1 : N;
            char buf[160];
            std::snprintf(buf, sizeof buf, "e %lld %lld %lld %d %d %d %d %d", (long long)M, (long long)N, (long long)K,
                          f.a16, f.b16, f.a128, f.b128, ld);
            std::string line = buf;
            line += " " + std::to_string(int(tensor_engine(o, true))) + std::to_string(int(tensor_engine(o, false)));
            for (std::int64_t sms : {132, 114})
              for (int optin : {232448, 166912, 101376}) {
                const MmaPlan m = mma_plan(o, sms, optin, fake_small_per_sm);
                const MmaPlan z = mma_plan(o, sms, optin, [](int) { return 0; });
                line += " " + std::to_string(m.tile.bm) + "x" + std::to_string(m.tile.bn) + "/" + std::to_string(m.load) +
                        "/" + std::to_string(m.splits) + "/" + std::to_string(m.split_len) + "/" + std::to_string(z.splits);
              }
            d.add(line);
          }
  for (std::int64_t M : kMs)
    for (std::int64_t N : kNKs)
      for (std::int64_t K : kNKs)
        for (bool b128 : {false, true})
          for (std::int64_t sms : {132, 114, 78}) {
            const WgmmaPlan w = wgmma_plan(M, N, K, b128, sms);
            char buf[200];
            std::snprintf(buf, sizeof buf, "w %lld %lld %lld %d %lld: %d %d %d %d %d %lld %.17g", (long long)M,
                          (long long)N, (long long)K, b128, (long long)sms, w.tile, w.splits, w.split_steps, w.slots,
                          w.cluster, (long long)w.tiles, w.estimate_us);
            d.add(buf);
          }
  for (std::int64_t M = 1; M <= kSmallMaxRows; ++M)
    for (std::int64_t N : kNKs)
      for (std::int64_t K : kNKs)
        for (std::int64_t sms : {132, 114}) {
          const SkinnyPlan s = skinny_plan(M, N, K, sms, fake_skinny_per_sm);
          const SkinnyPlan z = skinny_plan(M, N, K, sms, [](int) { return 0; });
          char buf[200];
          std::snprintf(buf, sizeof buf, "s %lld %lld %lld %lld: %d %d %d %g %d %d", (long long)M, (long long)N,
                        (long long)K, (long long)sms, s.mt, s.splits, s.split_len, s.waves, z.splits, z.split_len);
          d.add(buf);
        }
  for (std::int64_t M : kMs)
    for (std::int64_t N : kNKs)
      for (std::int64_t K : kNKs) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "f %lld %lld %lld: %.17g", (long long)M, (long long)N, (long long)K,
                      tensor_scratch_bytes(M, N, K));
        d.add(buf);
      }
  EXPECT_EQ(d.h, 0x5004c70adbfcfbb8ull) << std::hex << "digest 0x" << d.h;
}

TEST(GemmRules, ComputeRatesFollowTheDevicesMatrixPeak) {
  // The device's FP16 matrix peak as gpu_backend.cpp computes it (FLOP a clock an SM x SMs x clock).
  auto peak = [](int sms, double clock_mhz) { return 4096 * (sms * clock_mhz * 1e6 / 1e9); };
  // The H100 SXM and the H200 (132 SMs at 1980 MHz): exactly the rates the rules were measured at,
  // so their answers are those of the digest above; an unknown peak keeps them too.
  EXPECT_EQ(matrix_scale(peak(132, 1980)), 1.0);
  EXPECT_EQ(matrix_scale(0), 1.0);
  // An H100 PCIe (114 SMs at 1755 MHz): three quarters of the rate, so wgmma's estimate of the same
  // unsplit 4096^3 tile plan is 1 / 0.766 longer (its blocks' work, not the split's meeting).
  const double pcie = matrix_scale(peak(114, 1755));
  EXPECT_NEAR(pcie, 114 * 1755.0 / (132 * 1980.0), 1e-12);
  const WgmmaPlan h100 = wgmma_plan(4096, 4096, 4096, false, 114, 0, 1), other = wgmma_plan(4096, 4096, 4096, false, 114, 0, 1, pcie);
  EXPECT_NEAR(other.estimate_us / h100.estimate_us, 1 / pcie, 1e-9);
  // The padded copies' DRAM figures stay the H100's: at M = 33 (rows off 16 bytes) mma.sync in place
  // runs on the H200 as on the H100.
  EXPECT_EQ(tensor_engine(family(33, 4095, 4097), true, Engine::kAuto, matrix_scale(peak(132, 1980))), Engine::kMma);
}
