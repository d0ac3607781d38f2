#include "bwprof/half.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace bwprof;

TEST(Half, EveryHalfRoundTripsExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const half_bits x = static_cast<half_bits>(h);
    const float f = half_to_float(x);
    if (std::isnan(f)) {
      EXPECT_EQ(x & 0x7c00u, 0x7c00u);
      EXPECT_NE(x & 0x03ffu, 0u);
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    EXPECT_EQ(float_to_half(f), x) << std::hex << h;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to even (1.0).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // rounds past the largest finite half
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // halfway to the smallest subnormal: even
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
}
