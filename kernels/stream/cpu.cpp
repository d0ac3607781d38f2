// STREAM kernels (copy, scale, add, triad, dot) on the CPU.
#include <algorithm>
#include <string>
#include <vector>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "stream/stream.hpp"

namespace bwprof {

namespace {

template <class T>
void run_typed(StreamData& d, const std::string& op) {
  const std::size_t n = d.a.size();
  T* a = d.a.as<T>();
  T* b = d.b.as<T>();
  T* c = d.c.as<T>();
  const float s = d.scalar;
  constexpr std::size_t kGrain = 1 << 15;
  if (op == "copy") {
    parallel_for(n, kGrain, [&](std::size_t lo, std::size_t hi) { for (auto i = lo; i < hi; ++i) c[i] = a[i]; });
  } else if (op == "scale") {
    parallel_for(n, kGrain, [&](std::size_t lo, std::size_t hi) { for (auto i = lo; i < hi; ++i) store_f(b, i, s * load_f(c, i)); });
  } else if (op == "add") {
    parallel_for(n, kGrain, [&](std::size_t lo, std::size_t hi) { for (auto i = lo; i < hi; ++i) store_f(c, i, load_f(a, i) + load_f(b, i)); });
  } else if (op == "triad") {
    parallel_for(n, kGrain, [&](std::size_t lo, std::size_t hi) { for (auto i = lo; i < hi; ++i) store_f(a, i, load_f(b, i) + s * load_f(c, i)); });
  } else if (op == "read") {  // the sum of a: blocked FP32 partial sums, as the dot's
    const std::size_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<double> per_chunk(chunks, 0.0);
    parallel_for(chunks, 1, [&](std::size_t lo, std::size_t hi) {
      for (auto ch = lo; ch < hi; ++ch) {
        const std::size_t b0 = ch * kGrain, e0 = std::min(n, b0 + kGrain);
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::size_t i = b0;
        for (; i + 8 <= e0; i += 8)
          for (int k = 0; k < 8; ++k) acc[k] += load_f(a, i + k);
        double sum = 0;
        for (; i < e0; ++i) sum += load_f(a, i);
        for (int k = 0; k < 8; ++k) sum += acc[k];
        per_chunk[ch] = sum;
      }
    });
    double total = 0;
    for (double x : per_chunk) total += x;
    d.sum = total;
  } else {  // dot: blocked FP32 partial sums keep the rounding error small
    std::size_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<double> per_chunk(chunks, 0.0);
    parallel_for(chunks, 1, [&](std::size_t lo, std::size_t hi) {
      for (auto ch = lo; ch < hi; ++ch) {
        std::size_t b0 = ch * kGrain, e0 = std::min(n, b0 + kGrain);
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::size_t i = b0;
        for (; i + 8 <= e0; i += 8)
          for (int k = 0; k < 8; ++k) acc[k] += load_f(a, i + k) * load_f(b, i + k);
        float tail = 0;
        for (; i < e0; ++i) tail += load_f(a, i) * load_f(b, i);
        double sum = tail;
        for (int k = 0; k < 8; ++k) sum += acc[k];
        per_chunk[ch] = sum;
      }
    });
    double total = 0;
    for (double x : per_chunk) total += x;
    d.dot = total;
  }
}

BufferList buffers(const StreamData& d) {
  BufferList l;
  add_buffer(l, d.a);
  add_buffer(l, d.b);
  add_buffer(l, d.c);
  return l;
}

}  // namespace

void stream_cpu(StreamData& d, const Problem& p) {
  by_storage(p.dtype, [&](auto t) { run_typed<decltype(t)>(d, stream_op(p)); });
}

std::unique_ptr<KernelInstance> make_stream_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_stream_data(p), stream_cpu, stream_check, buffers);
}

}  // namespace bwprof
