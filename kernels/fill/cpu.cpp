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
  by_storage(p.dtype, [&](auto t) {
    using T = decltype(t);
    fill_typed<T>(d.y.as<T>(), d.y.size(), to_storage<T>(kFillValue));
  });
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
