// Fill on the CPU: every thread stores the constant over its part of the buffer.
#include <algorithm>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "fill/fill.hpp"

namespace bwprof {

namespace {

template <class T>
void fill_typed(T* y, std::size_t n, T value) {
  parallel_for(n, 1 << 15, [&](std::size_t lo, std::size_t hi) { std::fill(y + lo, y + hi, value); });
}

void fill_cpu(FillData& d, const Problem& p) {
  if (p.dtype == DType::kF32) fill_typed<float>(d.y.as<float>(), d.y.size(), kFillValue);
  else fill_typed<half_bits>(d.y.as<half_bits>(), d.y.size(), float_to_half(kFillValue));
}

BufferList buffers(const FillData& d) {
  BufferList l;
  add_buffer(l, d.y);
  return l;
}

}  // namespace

std::unique_ptr<KernelInstance> make_fill_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_fill_data(p), fill_cpu, fill_check, buffers);
}

}  // namespace bwprof
