// The CPU's cache levels: each thread goes over a region of its own sized to the level (L2 or
// L1; family.cpp sizes it), summing 32-bit integers, and for "rw" also copying one half of its
// region into the other. The loop is what a level's bandwidth needs to show: 8 independent 32-byte
// loads an iteration into 8 accumulators (no chain of dependent adds to wait on), over data
// aligned to the cache line, the lanes combined once a pass. A plain sum loop reached less than
// the L2 from the L1 (issue #45): the loads waited on the adds.
#include <cstdint>
#include <cstring>
#include <vector>

#include "bwprof/parallel.hpp"
#include "cache_bw/cache_bw.hpp"
#include "common/cpu_kernel.hpp"

namespace bwprof {

namespace {

// Eight 32-bit lanes (GCC's and Clang's vector extension: AVX2 or AVX-512 registers with
// -march=native, two SSE or NEON registers elsewhere).
typedef std::int32_t Lanes __attribute__((vector_size(32)));
typedef std::int64_t WideLanes __attribute__((vector_size(64)));
constexpr std::size_t kLanes = 8, kVectors = 8, kStep = kLanes * kVectors;  // 256 bytes an iteration

struct CacheData {
  std::vector<std::int32_t> storage;  // every worker's region, one after another, from `data` on
  std::int32_t* data = nullptr;       // storage's first element on a 64-byte boundary
  std::vector<std::int64_t> sums;     // each worker's sum over its passes
  std::size_t per = 0;                // elements per worker
  bool rw = false;
};

inline Lanes load(const std::int32_t* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One pass over n elements: their sum, and with `copy_to` each element also stored there. Each
// lane adds at most n / 64 values of the data (|value| <= 5), far from overflowing 32 bits.
template <bool kCopy>
WideLanes pass(const std::int32_t* p, std::size_t n, std::int32_t* copy_to) {
  Lanes acc[kVectors] = {};
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    for (std::size_t k = 0; k < kVectors; ++k) {
      const Lanes x = load(p + i + k * kLanes);
      if (kCopy) std::memcpy(copy_to + i + k * kLanes, &x, sizeof x);
      acc[k] += x;
    }
  }
  for (std::size_t k = 1; k < kVectors; ++k) acc[0] += acc[k];
  WideLanes wide = __builtin_convertvector(acc[0], WideLanes);
  for (; i < n; ++i) {  // a tail (the family's sizes leave none)
    if (kCopy) copy_to[i] = p[i];
    wide[0] += p[i];
  }
  return wide;
}

void run(CacheData& d, const Problem& p) {
  const std::int64_t passes = p.i("passes");
  parallel_for(d.sums.size(), 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t w = lo; w < hi; ++w) {
      std::int32_t* r = d.data + w * d.per;
      const std::size_t half = d.per / 2;
      WideLanes s = {};
      for (std::int64_t k = 0; k < passes; ++k) {
        s += d.rw ? pass<true>(r, half, r + half) : pass<false>(r, d.per, nullptr);
        asm volatile("" ::: "memory");  // every pass reads the memory again
      }
      std::int64_t total = 0;
      for (std::size_t l = 0; l < kLanes; ++l) total += s[l];
      d.sums[w] = total;
    }
  });
}

Check check(const CacheData& d, const Problem& p) {
  ErrorMeter m;
  const std::size_t n = d.rw ? d.per / 2 : d.per;
  for (std::size_t w = 0; w < d.sums.size(); ++w) {
    const std::int32_t* r = d.data + w * d.per;
    std::int64_t gold = 0;
    for (std::size_t i = 0; i < n; ++i) gold += static_cast<std::int64_t>(cache_value(static_cast<std::int64_t>(w * d.per + i)));
    m.add(static_cast<double>(d.sums[w]), static_cast<double>(gold) * p.i("passes"));
    if (d.rw)
      for (std::size_t i = 0; i < n; ++i) m.add(r[n + i], r[i]);
  }
  m.add_scale(1.0);
  return m.finish(0.0);
}

BufferList buffers(const CacheData&) { return {}; }  // the level's own data: never evicted

}  // namespace

std::unique_ptr<KernelInstance> make_cache_cpu(Backend&, const Problem& p) {
  CacheData d;
  d.rw = p.s("op") == "rw";
  const std::size_t workers = static_cast<std::size_t>(p.i("workers"));
  d.per = static_cast<std::size_t>(p.i("bytes")) / workers / sizeof(std::int32_t);
  const std::size_t n = d.per * workers, line = 64 / sizeof(std::int32_t);
  d.storage.resize(n + line);
  const std::size_t skew = (64 - reinterpret_cast<std::uintptr_t>(d.storage.data()) % 64) % 64 / sizeof(std::int32_t);
  d.data = d.storage.data() + skew;
  for (std::size_t i = 0; i < n; ++i) d.data[i] = static_cast<std::int32_t>(cache_value(static_cast<std::int64_t>(i)));
  d.sums.assign(workers, 0);
  return make_cpu_kernel(p, std::move(d), run, check, buffers);
}

}  // namespace bwprof
