// The intensity sweep on the CPU: read x, apply `fmas` dependent FMAs to each element, write y.
// Sweeping `fmas` walks a kernel from the bandwidth roof to the compute roof.
#include <algorithm>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "intensity_sweep/intensity_sweep.hpp"

namespace bwprof {

namespace {

constexpr int kLanes = 128;  // independent chains (8 AVX-512 vectors): the FMA latency is hidden across them

template <class T>
void sweep_typed(SweepData& d, std::int64_t fmas) {
  const T* x = d.x.as<T>();
  T* y = d.y.as<T>();
  const std::size_t n = d.x.size();
  parallel_for((n + kLanes - 1) / kLanes, 64, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t blk = lo; blk < hi; ++blk) {
      const std::size_t i0 = blk * kLanes, cnt = std::min<std::size_t>(kLanes, n - i0);
      float v[kLanes] = {0};
      for (std::size_t j = 0; j < cnt; ++j) v[j] = load_f(x, i0 + j);
      for (std::int64_t k = 0; k < fmas; ++k)
        for (int j = 0; j < kLanes; ++j) v[j] = v[j] * kSweepA + kSweepB;
      for (std::size_t j = 0; j < cnt; ++j) store_f(y, i0 + j, v[j]);
    }
  });
}

BufferList buffers(const SweepData& d) {
  BufferList l;
  add_buffer(l, d.x);
  add_buffer(l, d.y);
  return l;
}

}  // namespace

void sweep_cpu(SweepData& d, const Problem& p) {
  by_storage(p.dtype, [&](auto t) { sweep_typed<decltype(t)>(d, p.i("fmas")); });
}

std::unique_ptr<KernelInstance> make_intensity_sweep_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_sweep_data(p), sweep_cpu, sweep_check, buffers);
}

}  // namespace bwprof
