// The CPU's cache levels: each thread goes over a region of its own sized to the level (L2 or
// L1; family.cpp sizes it), summing 32-bit integers (a reduction the compiler vectorizes), and
// for "rw" also copying one half of its region into the other.
#include <cstdint>
#include <vector>

#include "bwprof/parallel.hpp"
#include "cache_bw/cache_bw.hpp"
#include "common/cpu_kernel.hpp"

namespace bwprof {

namespace {

struct CacheData {
  std::vector<std::int32_t> data;  // every worker's region, one after another
  std::vector<std::int64_t> sums;  // each worker's sum over its passes
  std::size_t per = 0;             // elements per worker
  bool rw = false;
};

// Sums the first half and copies it into the second in one go: each element read once.
std::int64_t sum_copy(std::int32_t* p, std::size_t n) {
  std::int64_t s0 = 0, s1 = 0;
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) s0 += (p[n + i] = p[i]), s1 += (p[n + i + 1] = p[i + 1]);
  for (; i < n; ++i) s0 += (p[n + i] = p[i]);
  return s0 + s1;
}

std::int64_t sum(const std::int32_t* p, std::size_t n) {
  std::int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
  for (; i < n; ++i) s0 += p[i];
  return s0 + s1 + s2 + s3;
}

void run(CacheData& d, const Problem& p) {
  const std::int64_t passes = p.i("passes");
  parallel_for(d.sums.size(), 1, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t w = lo; w < hi; ++w) {
      std::int32_t* r = d.data.data() + w * d.per;
      const std::size_t half = d.per / 2;
      std::int64_t s = 0;
      for (std::int64_t k = 0; k < passes; ++k) {
        if (d.rw) {
          s += sum_copy(r, half);
        } else {
          s += sum(r, d.per);
        }
        asm volatile("" ::: "memory");  // every pass reads the memory again
      }
      d.sums[w] = s;
    }
  });
}

Check check(const CacheData& d, const Problem& p) {
  ErrorMeter m;
  const std::size_t n = d.rw ? d.per / 2 : d.per;
  for (std::size_t w = 0; w < d.sums.size(); ++w) {
    const std::int32_t* r = d.data.data() + w * d.per;
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
  d.data.resize(d.per * workers);
  for (std::size_t i = 0; i < d.data.size(); ++i) d.data[i] = static_cast<std::int32_t>(cache_value(static_cast<std::int64_t>(i)));
  d.sums.assign(workers, 0);
  return make_cpu_kernel(p, std::move(d), run, check, buffers);
}

}  // namespace bwprof
