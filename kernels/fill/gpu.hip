// Fill on the GPU: 16-byte stores of the constant, each thread two vectors, a grid covering the
// buffer in one pass (the stream kernels' shape).
#include <algorithm>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "fill/fill.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kPerThread = 2;

template <class T>
__global__ void __launch_bounds__(kBlock) bwprof_fill(T* __restrict__ out, float value, std::size_t n) {
  constexpr int V = Elems<T>::kVec;
  const std::size_t nvec = n / V;
  float f[V];
#pragma unroll
  for (int e = 0; e < V; ++e) f[e] = value;
  const uint4 v = pack<T>(f);
  uint4* ov = reinterpret_cast<uint4*>(out);
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x * kPerThread;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kPerThread + threadIdx.x; base < nvec;
       base += step) {
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const std::size_t i = base + u * blockDim.x;
      if (i < nvec) ov[i] = v;
    }
  }
  // The tail that does not fill a 16-byte vector.
  const std::size_t t = nvec * V + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t < n) out[t] = from_f<T>(value);
}

class FillGpu final : public KernelInstance {
 public:
  FillGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_fill_data(p)) {
    y_ = DeviceBuffer::from(host_.y, "fill buffer");  // poisoned, as the host copy
    const std::size_t vecs = host_.y.size() / (16 / dtype_size(p.dtype));
    const std::size_t blocks = (vecs + kBlock * kPerThread - 1) / (kBlock * kPerThread);
    grid_ = static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 1u << 30));
  }
  void launch() override {
    const std::size_t n = host_.y.size();
    by_dtype(p_.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      bwprof_fill<T><<<grid_, kBlock, 0, g_.stream()>>>(y_.get<T>(), kFillValue, n);
    });
    BWPROF_CHECK_LAUNCH("bwprof_fill");
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return fill_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) { return kernel_resources(bwprof_fill<typename decltype(t)::type>, kBlock); });
  }

 private:
  GpuBackend& g_;
  Problem p_;
  FillData host_;
  DeviceBuffer y_;
  unsigned grid_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_fill_gpu(Backend& b, const Problem& p) {
  return std::make_unique<FillGpu>(as_gpu(b), p);
}

}  // namespace bwprof
