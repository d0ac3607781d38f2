// Where the decode kernel (decode_sm80.hpp) keeps a step's K or V in a warp's ring of shared memory.
// Plain C++ (the kernel and the host tests share it).
//   A step is 16 key rows of D elements, unpadded: one run of 16 D / 64 lines of 128 bytes, each line's
//   eight 16-byte chunks permuted by a function of the line (chunk j of line L at j ^ f(L)). So a warp's
//   copy of 512 contiguous bytes (chunks lane + 32 u of the step) writes whole lines of shared memory, and
//   ldmatrix's 8 rows at one column fall in 8 different bank groups. Rows padded to D + 8 elements, as
//   before, put every other row across two lines: the copies came apart into 10.5 requests to L2 a copy
//   instead of 4, and each sector was asked for 1.5 times (ncu, H200, fp16 B4 H64/8 S16384 D64, session 18).
//   f(L) = (L mod (D / 8)) / div mod 8: at head dims 64, 128 and 256 that is the row mod 8; at 32, 80 and
//   96 (rows of 4, 10, 12 chunks) div is 1, 5 and 3, found by a search over such tables.
#pragma once
#include "common/host_device.hpp"

namespace bwprof {
namespace attention {

// Element offset of row r's 16-byte chunk c in a step's K or V at head dim D.
template <int D>
BWPROF_HD constexpr int decode_ring_at(int r, int c) {
  constexpr int cpr = D / 8;  // chunks a row
  if constexpr (cpr % 8 == 0) {
    return r * D + ((c & ~7) | ((c ^ r) & 7)) * 8;
  } else {
    const int g = r * cpr + c, f = (((g >> 3) % cpr) / (cpr == 10 ? 5 : cpr == 12 ? 3 : 1)) & 7;
    return ((g & ~7) | ((g ^ f) & 7)) * 8;
  }
}

// Copies of 32 chunks a lane makes before its chunks' places in the ring repeat (rows of `cpr` chunks;
// the permutation repeats every 8 rows).
BWPROF_HD constexpr int decode_copy_period(int cpr) {
  for (int p = 1; p <= 64; ++p)
    if ((32 * p) % cpr == 0 && (32 * p / cpr) % 8 == 0) return p;
  return 0;
}

}  // namespace attention
}  // namespace bwprof
