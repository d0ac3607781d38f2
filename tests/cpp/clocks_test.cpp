// The GPU backend's clock reader: the amdgpu sysfs text, and a device the driver does not know
// (NaN, never an error). Built with the GPU backend only; needs no GPU.
#include <gtest/gtest.h>

#ifdef BWPROF_WITH_GPU
#include <cmath>

#include "gpu/clocks.hpp"

using namespace bwprof;

TEST(Clocks, CurrentLevelOfAnAmdgpuSclkTable) {
  EXPECT_EQ(parse_pp_dpm_sclk("0: 500Mhz\n1: 800Mhz\n2: 1700Mhz *\n"), 1700.0);
  EXPECT_EQ(parse_pp_dpm_sclk("0: 500Mhz *\n1: 2100Mhz\n"), 500.0);
  EXPECT_TRUE(std::isnan(parse_pp_dpm_sclk("0: 500Mhz\n1: 800Mhz\n")));  // no current level
  EXPECT_TRUE(std::isnan(parse_pp_dpm_sclk("")));
  EXPECT_TRUE(std::isnan(parse_pp_dpm_sclk("garbage *\n")));
}

TEST(Clocks, AnUnknownDeviceReadsAsNaNWithoutAnError) {
  for (const char* vendor : {"nvidia", "amd", "other"}) {
    ClockReader r("0000:ff:1f.7", vendor);
    const ClockSample s = r.sample();
    EXPECT_TRUE(std::isnan(s.sm_mhz)) << vendor;
    EXPECT_FALSE(s.throttled) << vendor;
    EXPECT_EQ(r.source(), "") << vendor;
  }
}

TEST(Clocks, ThrottleMaskIsThermalAndPowerOnly) {
  EXPECT_EQ(kNvmlThrottleMask & 0x1ull, 0u);   // GPU idle
  EXPECT_EQ(kNvmlThrottleMask & 0x2ull, 0u);   // application clocks setting
  EXPECT_EQ(kNvmlThrottleMask & 0x10ull, 0u);  // sync boost
  for (unsigned long long r : {0x4ull, 0x8ull, 0x20ull, 0x40ull, 0x80ull}) EXPECT_NE(kNvmlThrottleMask & r, 0u) << r;
}
#endif
