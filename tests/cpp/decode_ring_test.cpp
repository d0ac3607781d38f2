// Where the decode kernel keeps a step's K or V in shared memory (kernels/attention/decode_ring.hpp): every
// chunk a place of its own, a warp's copy of 512 contiguous bytes in whole 128-byte lines, and ldmatrix's
// 8 rows at one column in 8 different bank groups (no bank conflict), at every head dim the kernel takes.
#include <gtest/gtest.h>

#include <set>

#include "attention/decode_ring.hpp"

using namespace bwprof::attention;

namespace {

template <int D>
void check_ring() {
  constexpr int cpr = D / 8, rows = 16, bytes = 2;  // 16 key rows a step, 16-bit elements
  std::set<int> places;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cpr; ++c) {
      const int at = decode_ring_at<D>(r, c);
      ASSERT_EQ(at % 8, 0) << "D " << D;
      ASSERT_GE(at, 0);
      ASSERT_LT(at, rows * D);
      ASSERT_TRUE(places.insert(at).second) << "D " << D << " row " << r << " chunk " << c << " shares a place";
    }
  // A copy: chunks g .. g + 7 of the step (one 128-byte line of global memory) land in line g / 8.
  for (int g0 = 0; g0 < rows * cpr; g0 += 8)
    for (int j = 0; j < 8; ++j) {
      const int g = g0 + j;
      EXPECT_EQ(decode_ring_at<D>(g / cpr, g % cpr) * bytes / 128, g0 / 8) << "D " << D << " chunk " << g;
    }
  // ldmatrix: 8 consecutive rows from 0 or 8 at one chunk read 8 different 16-byte bank groups.
  for (int r0 : {0, 8})
    for (int c = 0; c < cpr; ++c) {
      std::set<int> groups;
      for (int i = 0; i < 8; ++i) groups.insert(decode_ring_at<D>(r0 + i, c) * bytes / 16 % 8);
      EXPECT_EQ(groups.size(), 8u) << "D " << D << " rows " << r0 << "+ chunk " << c;
    }
  // The kernel's copies: lane l's u-th copy is chunk l + 32 u; its place repeats every period copies,
  // moved on by the rows those copies cover.
  const int period = decode_copy_period(cpr), rows_per = 32 * period / cpr;
  ASSERT_GT(period, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int u = 0; u < rows * cpr / 32; ++u) {
      const int g = lane + 32 * u, p = lane + 32 * (u % period);
      EXPECT_EQ(decode_ring_at<D>(g / cpr, g % cpr), decode_ring_at<D>(p / cpr, p % cpr) + (u / period) * rows_per * D)
          << "D " << D << " lane " << lane << " copy " << u;
    }
}

}  // namespace

TEST(DecodeRing, EveryHeadDim) {
  check_ring<32>();
  check_ring<64>();
  check_ring<80>();
  check_ring<96>();
  check_ring<128>();
  check_ring<256>();
}

TEST(DecodeRing, HeadDimsOfWholeLinesPermuteByTheRow) {
  // At 64, 128 and 256 the permutation is chunk c of row r at c ^ (r % 8) within its line.
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) EXPECT_EQ(decode_ring_at<128>(r, c), r * 128 + ((c & 8) | ((c ^ r) & 7)) * 8);
}
