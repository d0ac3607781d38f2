// Upper bounds of the transformer parameters that several families share (attention, the KV
// cache). Far above any model's, so that a value beyond them is a typing mistake; whether a shape
// fits in memory is checked apart, from the family's footprint.
#pragma once
#include <cstdint>

namespace bwprof {

constexpr std::int64_t kMaxBatch = 1 << 16;      // sequences
constexpr std::int64_t kMaxHeads = 1 << 12;      // query or key/value heads
constexpr std::int64_t kMaxHeadDim = 1 << 12;    // dimension of one head
constexpr std::int64_t kMaxBlockSize = 1 << 16;  // positions per block of a paged cache

}  // namespace bwprof
