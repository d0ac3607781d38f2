// The CPU variants' kernel instance (host data, the threaded kernel and its reference check) and
// the element accessors their typed FP32 / FP16-storage loops share.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

using BufferList = std::vector<std::pair<const void*, std::size_t>>;

// Element access as float for the typed (FP32 / FP16- / BF16-storage) loops of the CPU kernels.
inline float load_f(const float* p, std::size_t i) { return p[i]; }
inline float load_f(const half_bits* p, std::size_t i) { return half_to_float(p[i]); }
inline float load_f(const bf16_bits* p, std::size_t i) { return bf16_to_float(p[i]); }
inline void store_f(float* p, std::size_t i, float v) { p[i] = v; }
inline void store_f(half_bits* p, std::size_t i, float v) { p[i] = float_to_half(v); }
inline void store_f(bf16_bits* p, std::size_t i, float v) { p[i] = float_to_bf16(v); }
template <class T> T to_storage(float v) { T t; store_f(&t, 0, v); return t; }

// Calls f(T{}) with T the host storage type of `t` (float, half_bits or bf16_bits): the one place
// a typed CPU loop is chosen by dtype.
template <class F>
decltype(auto) by_storage(DType t, F&& f) {
  switch (t) {
    case DType::kF16: return f(half_bits{});
    case DType::kBF16: return f(bf16_bits{});
    default: return f(float{});
  }
}

inline void add_buffer(BufferList& l, const HostTensor& t) { if (t.size()) l.emplace_back(t.data(), t.bytes()); }
inline void add_buffer(BufferList& l, const HostBytes& b) { if (b.size()) l.emplace_back(b.data(), b.size()); }

template <class Data>
class CpuKernel final : public KernelInstance {
 public:
  using RunFn = void (*)(Data&, const Problem&);
  using CheckFn = Check (*)(const Data&, const Problem&);
  using BuffersFn = BufferList (*)(const Data&);

  CpuKernel(const Problem& p, Data d, RunFn run, CheckFn check, BuffersFn buffers)
      : p_(p), data_(std::move(d)), run_(run), check_(check), buffers_(buffers) {}
  void launch() override { run_(data_, p_); }
  Check check() override { return check_(data_, p_); }
  BufferList host_buffers() const override { return buffers_(data_); }

 private:
  Problem p_;
  Data data_;
  RunFn run_;
  CheckFn check_;
  BuffersFn buffers_;
};

template <class Data>
std::unique_ptr<KernelInstance> make_cpu_kernel(const Problem& p, Data d, void (*run)(Data&, const Problem&),
                                                Check (*check)(const Data&, const Problem&),
                                                BufferList (*buffers)(const Data&)) {
  return std::make_unique<CpuKernel<Data>>(p, std::move(d), run, check, buffers);
}

}  // namespace bwprof
