// The intensity sweep on the CPU: read x, apply `fmas` dependent FMAs to each element, write y.
// Sweeping `fmas` walks a kernel from the bandwidth roof to the compute roof.
#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

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

SweepData make_sweep_data(const Problem& p) {
  const std::size_t n = p.i("n");
  SweepData d;
  d.x = HostTensor(p.dtype, n, "sweep x");
  d.y = HostTensor(p.dtype, n, "sweep y");
  d.x.fill_random(91);
  d.y.fill(0.0f);
  return d;
}

void sweep_cpu(SweepData& d, const Problem& p) {
  if (p.dtype == DType::kF32) sweep_typed<float>(d, p.i("fmas")); else sweep_typed<half_bits>(d, p.i("fmas"));
}

Check sweep_check(const SweepData& d, const Problem& p) {
  const std::int64_t fmas = p.i("fmas");
  ErrorMeter m;
  for (std::int64_t i : sample_indices(static_cast<std::int64_t>(d.x.size()), 4096)) {
    double v = d.x.get(i);
    for (std::int64_t k = 0; k < fmas; ++k) v = v * kSweepA + kSweepB;
    m.add(d.y.get(i), v);
  }
  return m.finish(tolerance_for(p.dtype, 1e-5));
}

std::unique_ptr<KernelInstance> make_intensity_sweep_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_sweep_data(p), sweep_cpu, sweep_check, buffers);
}

}  // namespace bwprof
