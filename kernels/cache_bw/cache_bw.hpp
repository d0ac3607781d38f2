// The cache levels' bandwidth: L2 (a working set between the L1s and the L2 capacity, each block
// reading a different slice each pass so no L1 can hold it), L1 (each block re-reading a small
// region of its own) and shared memory / LDS (each block re-reading its own shared array, no bank
// conflicts). Each reads only ("read") or reads one half and writes the other ("rw"). The peaks
// policy measures them (Ceiling::kL2, kL1, kShared); no suite configuration.
#pragma once
#include <cstdint>
#include <memory>

#include "bwprof/kernel.hpp"

namespace bwprof {

// Threads per GPU block and bytes each reads per load (a float4): a block's slice or region is a
// multiple of kCacheChunk bytes.
constexpr int kCacheThreads = 256;
constexpr std::int64_t kCacheChunk = kCacheThreads * 16;

// The value of element i of the data (small integers: every sum of them is exact in FP32).
inline float cache_value(std::int64_t i) { return static_cast<float>((i * 37) % 11 - 5); }

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_cache_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_l2_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_l1_gpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_shared_gpu(Backend&, const Problem&);

}  // namespace bwprof
