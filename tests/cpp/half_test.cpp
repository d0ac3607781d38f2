#include "bwprof/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

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

#include "bwprof/bf16.hpp"

namespace {
bf16_bits bf(std::uint16_t b) { return bf16_bits(b); }
std::uint16_t bits(bf16_bits b) { return static_cast<std::uint16_t>(b); }
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

TEST(Bf16, EveryBf16RoundTripsExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_float(bf(static_cast<std::uint16_t>(h)));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f)))) << std::hex << h;
      continue;
    }
    EXPECT_EQ(bits(float_to_bf16(f)), h) << std::hex << h;
  }
}

TEST(Bf16, KnownValues) {
  EXPECT_EQ(bf16_to_float(bf(0x3f80)), 1.0f);
  EXPECT_EQ(bf16_to_float(bf(0xc000)), -2.0f);
  EXPECT_EQ(bf16_to_float(bf(0x7f7f)), from_bits(0x7f7f0000u));  // largest finite, about 3.39e38
  EXPECT_EQ(bf16_to_float(bf(0x0001)), from_bits(0x00010000u));  // smallest subnormal, 2^-133
  EXPECT_TRUE(std::isinf(bf16_to_float(bf(0x7f80))));
}

TEST(Bf16, RoundsToNearestEvenAgainstARoundingReference) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to even (1.0); 1 + 3 * 2^-8 lies
  // halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(bits(float_to_bf16(1.0f + std::ldexp(1.0f, -8))), 0x3f80);
  EXPECT_EQ(bits(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))), 0x3f82);
  EXPECT_EQ(bits(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20))), 0x3f81);  // past halfway
  EXPECT_EQ(bits(float_to_bf16(from_bits(0x7f7fffffu))), 0x7f80);  // FLT_MAX rounds to infinity
  EXPECT_EQ(bits(float_to_bf16(-0.0f)), 0x8000);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(from_bits(0x7f800001u)))));  // a NaN whose payload is low
  // Every 2^-16th float: the nearest bfloat16 (ties to the even one), found by comparing the two
  // neighbours in double.
  for (std::uint32_t u = 0; u < 0x7f800000u; u += 0x10001u) {
    const float f = from_bits(u);
    const std::uint16_t lo = static_cast<std::uint16_t>(u >> 16);
    const double a = bf16_to_float(bf(lo)), b = bf16_to_float(bf(static_cast<std::uint16_t>(lo + 1)));
    const double da = double(f) - a, db = b - double(f);
    const std::uint16_t want = da < db ? lo : db < da ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    ASSERT_EQ(bits(float_to_bf16(f)), want) << std::hex << u;
  }
}
