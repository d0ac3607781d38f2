#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "q4_0/q4_0.hpp"

using namespace bwprof;

TEST(Q4_0, BlockLayoutMatchesLlamaCpp) {
  // Values 0..31 scaled so the largest magnitude (31) maps to q = 0: scale = 31 / -8.
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j);
  std::uint8_t q[kQ4BlockBytes];
  q4_0_quantize_row(x, 32, q);
  half_bits dh;
  std::memcpy(&dh, q, 2);
  EXPECT_NEAR(half_to_float(dh), 31.0f / -8.0f, 2e-3);
  // Element 31 (the largest) is the high nibble of byte 15 and quantizes to 0 (value -8 * d = 31).
  EXPECT_EQ(q[2 + 15] >> 4, 0);
  // Element 0 is 0.0: q = 8, in the low nibble of byte 0.
  EXPECT_EQ(q[2] & 0x0f, 8);
  float y[32];
  q4_0_dequantize_row(q, 32, y);
  EXPECT_NEAR(y[31], 31.0f, 31.0f / 1024);
  EXPECT_FLOAT_EQ(y[0], 0.0f);
}

TEST(Q4_0, RoundTripErrorIsWithinHalfAStep) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const int n = 32 * 4096;
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = u(rng);
  std::vector<std::uint8_t> q(n / 32 * kQ4BlockBytes);
  q4_0_quantize_row(x.data(), n, q.data());
  q4_0_dequantize_row(q.data(), n, y.data());
  double sum_sq = 0;
  for (int b = 0; b < n / 32; ++b) {
    half_bits dh;
    std::memcpy(&dh, q.data() + b * kQ4BlockBytes, 2);
    const double d = std::fabs(half_to_float(dh)), slack = 9.0 * d * std::ldexp(1.0, -10) + 1e-7;
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    for (int j = 0; j < 32; ++j) {
      const double v = x[b * 32 + j], e = std::fabs(v - y[b * 32 + j]);
      // Codes reach -8 steps on the side of the block's extreme but only +7 on the other, so
      // values past 7 steps on that side saturate (error up to one step); all others round to
      // the nearest step (error up to half a step). The FP16 scale adds a little.
      const bool saturates = std::fabs(v) > 7.0 * d && std::fabs(v) != amax;
      EXPECT_LE(e, (saturates ? 1.0 : 0.5) * d + slack) << "block " << b << " element " << j;
      sum_sq += e * e;
    }
  }
  EXPECT_LT(std::sqrt(sum_sq / n), 0.15);  // RMS of a uniform rounding error of step ~0.375
}

TEST(Q4_0, ZeroBlockHasZeroScale) {
  float x[32] = {0};
  std::uint8_t q[kQ4BlockBytes];
  q4_0_quantize_row(x, 32, q);
  float y[32];
  q4_0_dequantize_row(q, 32, y);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// The tensor-core matmul's ring kernel by grid fill (q4_ring_choice, used by matmul_mma_sm80.hip).
TEST(Q4_0, RingChoiceFollowsTheGridFill) {
  const std::int64_t sms = 132;  // H100 SXM, H200
  const std::int64_t rx = 2;     // blocks of ringx8x4rl an SM holds (sm_90, 96 registers)
  const std::int64_t r16 = 2;    // blocks of ring16x2rle (sm_90, 57 registers, 512 threads)
  const std::int64_t fl = 2;     // blocks of flood32x2 (sm_90, 32 registers, 1024 threads)
  // Two rows of X (M = 2) never take ring16x2rle or flood32x2: the rule of ringx8x4rl and ring8x4rl.
  // 14336 rows = 896 tiles: 27 warps an SM at 4 warps a tile.
  EXPECT_STREQ(q4_ring_choice(896, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  // 4096 rows = 256 tiles: under 16 warps an SM at 4 warps a tile, one wave; K = 4096 -> X in registers.
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 2, rx, r16, fl), "ringx8x4rl");
  // The same grid with a longer row keeps X in shared memory (4096x14336).
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096 + 32, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(256, sms, 14336, 2, rx, r16, fl), "ring8x4rl");
  // The edge of one wave of ringx8x4rl: 264 tiles (4224 rows) fit, 265 do not; 5120-8192 rows are
  // past it (two waves of it were 11-19 % slower on an H200).
  EXPECT_STREQ(q4_ring_choice(264, sms, 4096, 2, rx, r16, fl), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(265, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(320, sms, 4096, 2, rx, r16, fl), "ring8x4rl");  // 5120 rows
  EXPECT_STREQ(q4_ring_choice(384, sms, 4096, 2, rx, r16, fl), "ring8x4rl");  // 6144 rows
  EXPECT_STREQ(q4_ring_choice(527, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  // Where more blocks of it fit, the fill still bounds it: 528 tiles is exactly 16 warps an SM.
  EXPECT_STREQ(q4_ring_choice(527, sms, 4096, 2, 4, r16, fl), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(528, sms, 4096, 2, 4, r16, fl), "ring8x4rl");
  // More tiles than fit at once.
  EXPECT_STREQ(q4_ring_choice(16 * sms + 1, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  // An unknown occupancy (0 or less) never picks it.
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 2, 0, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 2, -1, r16, fl), "ring8x4rl");
  // 1.25 tiles an SM or fewer keep X in shared memory: 2560 rows = 160 tiles; the edge is 165 / 166.
  EXPECT_STREQ(q4_ring_choice(160, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(165, sms, 4096, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(166, sms, 4096, 2, rx, r16, fl), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(192, sms, 4096, 2, rx, r16, fl), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(64, sms, 4096, 2, rx, r16, fl), "ring8x4rl");  // 1024 rows
  // A smaller GPU (H100 PCIe, 114 SMs): 4096 rows are 256 tiles, past one wave of 228.
  EXPECT_STREQ(q4_ring_choice(256, 114, 4096, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(228, 114, 4096, 2, rx, r16, fl), "ringx8x4rl");
  // Odd sizes: 1 tile (N <= 16) and a tiny K.
  EXPECT_STREQ(q4_ring_choice(1, sms, 32, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(1, 1, 32, 2, rx, r16, fl), "ring8x4rl");   // one SM, one tile: not more than 1.25 an SM
  EXPECT_STREQ(q4_ring_choice(2, 1, 32, 2, rx, r16, fl), "ringx8x4rl");  // two tiles of 4 warps: under-filled, spread, one wave
  EXPECT_STREQ(q4_ring_choice(3, 1, 32, 2, rx, r16, fl), "ring8x4rl");   // three: past one wave of 2
  EXPECT_STREQ(q4_ring_choice(4, 1, 32, 2, rx, r16, fl), "ring8x4rl");   // 4 tiles x 4 warps = 16 warps on it
}

// One row of X (M = 1): flood32x2 for rows up to 4096 long (one round) up to 1.25 waves of it,
// ring16x2rle for longer rows while its whole grid is resident at once; else the rule above (which
// M = 1 shares with M = 2).
TEST(Q4_0, RingChoiceForOneRowTakesTheFloodOrTheSixteenWarpRing) {
  const std::int64_t sms = 132, rx = 2, r16 = 2, fl = 2;
  for (std::int64_t tiles : {1, 32, 64, 128, 165, 166, 192, 256, 264, 265, 320, 330})  // 16 to 5280 rows
    for (std::int64_t K : {32, 1024, 2048, 4064, 4096})
      EXPECT_STREQ(q4_ring_choice(tiles, sms, K, 1, rx, r16, fl), "flood32x2") << tiles << " " << K;
  EXPECT_STREQ(q4_ring_choice(256, sms, 14336, 1, rx, r16, fl), "ring16x2rle");  // 4096x14336
  EXPECT_STREQ(q4_ring_choice(256, sms, 4128, 1, rx, r16, fl), "ring16x2rle");   // one chunk past one round
  // Past 1.25 waves of the flood (330 tiles at 2 blocks an SM), or one wave of the 16-warp ring: the
  // rule above.
  EXPECT_STREQ(q4_ring_choice(331, sms, 4096, 1, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(384, sms, 2048, 1, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(896, sms, 4096, 1, rx, r16, fl), "ring8x4rl");  // 14336x4096
  EXPECT_STREQ(q4_ring_choice(495, sms, 4096, 1, rx, r16, 3), "flood32x2");   // where 3 blocks fit
  EXPECT_STREQ(q4_ring_choice(496, sms, 4096, 1, rx, r16, 3), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(265, sms, 4128, 1, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(265, sms, 4128, 1, rx, 3, fl), "ring16x2rle");
  // An unknown occupancy of the flood (0 or less): the 16-warp ring at K = 4096, the rule above below it.
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 1, rx, r16, 0), "ring16x2rle");
  EXPECT_STREQ(q4_ring_choice(256, sms, 4064, 1, rx, r16, -1), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(64, sms, 2048, 1, rx, r16, 0), "ring8x4rl");
  // Two rows of X: never.
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 2, rx, r16, fl), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(256, sms, 14336, 2, rx, r16, fl), "ring8x4rl");
  EXPECT_STREQ(q4_ring_choice(256, sms, 4096, 1, rx, 0, 0), "ringx8x4rl");
  EXPECT_STREQ(q4_ring_choice(64, sms, 4096, 1, rx, -1, -1), "ring8x4rl");
}
