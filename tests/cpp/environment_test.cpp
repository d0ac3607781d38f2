// The environment's settings (bwprof/environment.hpp): unset or empty leaves the default; a value
// each takes is read whole; anything else is an InvalidArgument "NAME=value: expected ...".
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "bwprof/error.hpp"
#include "bwprof/environment.hpp"
#include "message_of.hpp"
#include "scoped_env.hpp"

using namespace bwprof;
using env::read_int;
using env::read_positive;

constexpr const char* kName = "BWPROF_TEST_SETTING";

TEST(Environment, UnsetOrEmptyLeavesTheDefault) {
  unsetenv(kName);
  EXPECT_FALSE(read_int(kName, 1, 4));
  EXPECT_FALSE(read_positive(kName));
  ScopedEnv e(kName, "");
  EXPECT_FALSE(read_int(kName, 1, 4));
  EXPECT_FALSE(read_positive(kName));
}

TEST(Environment, IntegersWholeAndInRange) {
  for (const auto& [v, want] : {std::pair<const char*, std::int64_t>{"1", 1}, {"4", 4}, {"+3", 3}, {"04", 4}}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(read_int(kName, 1, 4).value(), want) << v;
  }
  for (const char* v : {"0", "5", "x", "3x", "2.0", " 2", "1e1", "99999999999999999999999"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { read_int(kName, 1, 4); }), std::string(kName) + "=" + v + ": expected an integer from 1 to 4")
        << v;
  }
  ScopedEnv big(kName, "1099511627776");  // beyond 32 bits
  EXPECT_EQ(read_int(kName, 1, std::int64_t{1} << 41).value(), std::int64_t{1} << 40);
}

TEST(Environment, PositiveNumbers) {
  {
    ScopedEnv e(kName, "1e-9");
    EXPECT_DOUBLE_EQ(read_positive(kName).value(), 1e-9);
  }
  {
    ScopedEnv e(kName, "inf");  // no bound
    EXPECT_TRUE(std::isinf(read_positive(kName).value()));
  }
  for (const char* v : {"0", "-2", "never", "-inf", "nan", "12 GB", " 5"}) {
    ScopedEnv e(kName, v);
    EXPECT_EQ(message_of<InvalidArgument>([] { read_positive(kName); }), std::string(kName) + "=" + v + ": expected a positive number") << v;
  }
}

TEST(Environment, EachSettingReadsItsVariable) {
  {
    ScopedEnv e("BWPROF_CPU_THREADS", "3");
    EXPECT_EQ(env::cpu_threads().value(), 3);
  }
  {
    ScopedEnv e("BWPROF_PEAK_ARRAY_BYTES", "lots");
    EXPECT_EQ(message_of<InvalidArgument>([] { env::peak_array_bytes(); }),
              "BWPROF_PEAK_ARRAY_BYTES=lots: expected an integer from 4096 to 1099511627776");
  }
  {
    ScopedEnv e("BWPROF_MEMORY_LIMIT", "2e9");
    EXPECT_DOUBLE_EQ(env::memory_limit_bytes().value(), 2e9);
  }
  {
    ScopedEnv e("BWPROF_MAX_LAUNCH_S", "0");
    EXPECT_EQ(message_of<InvalidArgument>([] { env::max_launch_seconds(); }),
              "BWPROF_MAX_LAUNCH_S=0: expected a positive number");
  }
  {
    ScopedEnv e("BWPROF_NCCL_LIBRARY", "");
    EXPECT_EQ(env::nccl_library(), nullptr);  // empty: unset
  }
}
