// The environment's settings (bwprof/knobs.hpp): unset or empty leaves the default; a value each
// takes is read whole; anything else is an InvalidArgument "NAME=value: expected ...".
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "message_of.hpp"
#include "scoped_env.hpp"

using namespace bwprof;

constexpr const char* kName = "BWPROF_TEST_KNOB";

TEST(Knobs, UnsetOrEmptyLeavesTheDefault) {
  unsetenv(kName);
  EXPECT_FALSE(knob_int(kName, 1, 4));
  EXPECT_FALSE(knob_number(kName, 0, 1));
  EXPECT_FALSE(knob_positive(kName));
  EXPECT_FALSE(knob_switch(kName));
  EXPECT_FALSE(knob_choice(kName, {"a", "b"}));
  ScopedEnv e(kName, "");
  EXPECT_FALSE(knob_int(kName, 1, 4));
  EXPECT_FALSE(knob_number(kName, 0, 1));
  EXPECT_FALSE(knob_positive(kName));
  EXPECT_FALSE(knob_switch(kName));
  EXPECT_FALSE(knob_choice(kName, {"a", "b"}));
}

TEST(Knobs, IntegersWholeAndInRange) {
  for (const auto& [v, want] : {std::pair<const char*, std::int64_t>{"1", 1}, {"4", 4}, {"+3", 3}, {"04", 4}}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(knob_int(kName, 1, 4).value(), want) << v;
  }
  for (const char* v : {"0", "5", "x", "3x", "2.0", " 2", "1e1", "99999999999999999999999"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_int(kName, 1, 4); }), std::string(kName) + "=" + v + ": expected an integer from 1 to 4")
        << v;
  }
  ScopedEnv big(kName, "1099511627776");  // beyond 32 bits
  EXPECT_EQ(knob_int(kName, 1, std::int64_t{1} << 41).value(), std::int64_t{1} << 40);
}

TEST(Knobs, NumbersAboveLowAndAtMostHigh) {
  {
    ScopedEnv e(kName, "0.5");
    EXPECT_DOUBLE_EQ(knob_number(kName, 0, 64).value(), 0.5);
  }
  {
    ScopedEnv e(kName, "64");
    EXPECT_DOUBLE_EQ(knob_number(kName, 0, 64).value(), 64.0);
  }
  for (const char* v : {"0", "-1", "64.5", "nan", "inf", "1/2", "0.5x", "0x"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_number(kName, 0, 64); }),
              std::string(kName) + "=" + v + ": expected a number above 0 and at most 64")
        << v;
  }
  {
    ScopedEnv e(kName, "0.05");
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_number(kName, 0.125, 2.5); }),
              std::string(kName) + "=0.05: expected a number above 0.125 and at most 2.5");
  }
}

TEST(Knobs, PositiveNumbers) {
  {
    ScopedEnv e(kName, "1e-9");
    EXPECT_DOUBLE_EQ(knob_positive(kName).value(), 1e-9);
  }
  {
    ScopedEnv e(kName, "inf");  // no bound
    EXPECT_TRUE(std::isinf(knob_positive(kName).value()));
  }
  for (const char* v : {"0", "-2", "never", "-inf", "nan", "12 GB", " 5"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_positive(kName); }), std::string(kName) + "=" + v + ": expected a positive number") << v;
  }
}

TEST(Knobs, SwitchesAreZeroOrOne) {
  {
    ScopedEnv e(kName, "0");
    EXPECT_EQ(knob_switch(kName), false);
  }
  {
    ScopedEnv e(kName, "1");
    EXPECT_EQ(knob_switch(kName), true);
  }
  for (const char* v : {"2", "yes", "true", "on", "01", "no"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_switch(kName); }), std::string(kName) + "=" + v + ": expected 0 or 1") << v;
  }
}

TEST(Knobs, ChoicesByExactName) {
  {
    ScopedEnv e(kName, "tma");
    EXPECT_EQ(knob_choice(kName, {"cp", "tma"}), 1);
  }
  {
    ScopedEnv e(kName, "TMA");
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_choice(kName, {"cp", "tma"}); }), std::string(kName) + "=TMA: expected cp or tma");
  }
  {
    ScopedEnv e(kName, "dma");
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_choice(kName, {"rows", "flash", "decode", "wgmma"}); }),
              std::string(kName) + "=dma: expected one of rows, flash, decode or wgmma");
  }
  {
    ScopedEnv e(kName, "x");
    EXPECT_EQ(message_of<InvalidArgument>([] { knob_choice(kName, {"only"}); }), std::string(kName) + "=x: expected only");
  }
}
