#include "bwprof/stats.hpp"

#include <gtest/gtest.h>

#include "bwprof/error.hpp"

using namespace bwprof;

TEST(Stats, OddCount) {
  TimingStats s = summarize({5, 1, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.stddev, 2);  // sample standard deviation: sqrt((4 + 0 + 4) / 2)
  EXPECT_DOUBLE_EQ(s.cv, 2.0 / 3.0);
  EXPECT_EQ(s.count, 3);
}

TEST(Stats, EvenCountMedianIsMidpoint) {
  TimingStats s = summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
}

TEST(Stats, SingleSample) {
  TimingStats s = summarize({7});
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
}

TEST(Stats, EmptyIsAnError) { EXPECT_THROW(summarize({}), InvalidArgument); }

TEST(Stats, UnstableWhenSpreadIsLarge) {
  EXPECT_FALSE(is_unstable(summarize({100, 101, 99, 100, 100})));
  EXPECT_TRUE(is_unstable(summarize({100, 150, 60, 130, 80})));   // CV well above 10 %
  EXPECT_TRUE(is_unstable(summarize({100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
                                     100, 100, 100, 100, 100, 100, 100, 250})));  // one 2.5x outlier
}
