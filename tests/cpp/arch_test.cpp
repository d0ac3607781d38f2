// The one architecture table: rates and occupancy limits in one row, one name normalisation.
#include "bwprof/arch.hpp"

#include <gtest/gtest.h>

#include "bwprof/error.hpp"
#include "bwprof/occupancy.hpp"

using namespace bwprof;

TEST(Arch, SpellingsOfOneArchitectureFindTheSameRow) {
  const Arch* h = find_arch("sm_90");
  ASSERT_NE(h, nullptr);
  for (const char* s : {"sm_90a", "sm90", "SM_90", "compute_90", " sm_90 "}) EXPECT_EQ(find_arch(s), h) << s;
  EXPECT_EQ(find_arch("gfx90a:sramecc+:xnack-"), find_arch("gfx90a"));
  EXPECT_EQ(find_arch("sm_42"), nullptr);
  EXPECT_EQ(find_arch(""), nullptr);
}

TEST(Arch, SmVersionIsNvidiasNumberAndZeroElsewhere) {
  EXPECT_EQ(sm_version("sm_90"), 90);
  EXPECT_EQ(sm_version("sm_90a"), 90);
  EXPECT_EQ(sm_version("compute_80"), 80);
  EXPECT_EQ(sm_version("SM_100a"), 100);
  EXPECT_EQ(sm_version("gfx90a"), 0);  // an AMD target: not read as 90
  EXPECT_EQ(sm_version("gfx90a:sramecc+:xnack-"), 0);
  EXPECT_EQ(sm_version(""), 0);
}

TEST(Arch, HopperRatesAreThoseOfItsWhitepaper) {
  // H100 SXM: 256 FP32 FLOP/clk per SM, 512 FP16 (vector), 4096 dense FP16 on the tensor cores.
  const Arch* h = find_arch("sm_90");
  EXPECT_DOUBLE_EQ(h->rates.fp32, 256);
  EXPECT_DOUBLE_EQ(h->rates.fp16, 512);
  EXPECT_DOUBLE_EQ(h->rates.fp16_matrix, 4096);
  ASSERT_TRUE(h->has_limits);
  EXPECT_EQ(h->limits.name, "sm_90");
  EXPECT_EQ(h->limits.family, "Hopper");
}

TEST(Arch, OccupancyTableIsTheRowsWithLimitsInTableOrder) {
  std::vector<std::string> with_limits;
  for (auto& a : architectures()) {
    EXPECT_GT(a.rates.fp32, 0) << a.name;  // every row has rates
    if (a.has_limits) {
      EXPECT_EQ(a.limits.name, a.name);
      with_limits.push_back(a.name);
    }
  }
  EXPECT_EQ(occupancy_arch_names(), with_limits);
  EXPECT_EQ(with_limits.front(), "sm_70");
  EXPECT_EQ(with_limits.back(), "gfx1102");
}

TEST(Arch, RatesWithoutLimitsLeaveOccupancyUnknown) {
  // Blackwell has rates (the backend's theoretical peaks) but no occupancy limits in the table.
  const Arch* b = find_arch("sm_100");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->has_limits);
  EXPECT_DOUBLE_EQ(b->rates.fp16_matrix, 8192);
  EXPECT_THROW(arch_limits("sm_100"), InvalidArgument);
  EXPECT_THROW(compute_occupancy("sm_100", 128, 32, 0), InvalidArgument);
}
