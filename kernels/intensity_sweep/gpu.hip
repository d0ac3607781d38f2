// The intensity sweep on the GPU: each thread reads one 16-byte vector, applies `fmas` dependent
// FMAs to each of its values (independent chains across them), and writes the vector back.
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "intensity_sweep/intensity_sweep.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;

template <class T>
__global__ void __launch_bounds__(kBlock) bwprof_intensity_sweep(const T* __restrict__ x, T* __restrict__ y,
                                                                 std::size_t n, int fmas) {
  constexpr int V = Elems<T>::kVec;
  const std::size_t nvec = n / V;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < nvec; i += stride) {
    float v[V];
    unpack<T>(reinterpret_cast<const uint4*>(x)[i], v);
    for (int k = 0; k < fmas; ++k) {
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] = fmaf(v[e], kSweepA, kSweepB);
    }
    reinterpret_cast<uint4*>(y)[i] = pack<T>(v);
  }
  const std::size_t t = nvec * V + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t < n) {
    float v = to_f(x[t]);
    for (int k = 0; k < fmas; ++k) v = fmaf(v, kSweepA, kSweepB);
    y[t] = from_f<T>(v);
  }
}

class SweepGpu final : public KernelInstance {
 public:
  SweepGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_sweep_data(p)) {
    if (p.i("fmas") > 1 << 30) throw InvalidArgument("fmas: at most 2^30 on the GPU");
    x_ = DeviceBuffer::from(host_.x, "sweep x");
    y_ = DeviceBuffer::from(host_.y, "sweep y");
    const std::size_t vecs = host_.x.size() / (16 / dtype_size(p.dtype)) + 1;
    grid_ = static_cast<unsigned>(std::min<std::size_t>((vecs + kBlock - 1) / kBlock, 1u << 30));
  }
  void launch() override {
    const int fmas = static_cast<int>(p_.i("fmas"));
    by_dtype(p_.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      bwprof_intensity_sweep<T><<<grid_, kBlock, 0, g_.stream()>>>(x_.get<T>(), y_.get<T>(), host_.x.size(), fmas);
    });
    BWPROF_CHECK_LAUNCH("bwprof_intensity_sweep");
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return sweep_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) {
      return kernel_resources(bwprof_intensity_sweep<typename decltype(t)::type>, kBlock);
    });
  }

 private:
  GpuBackend& g_;
  Problem p_;
  SweepData host_;
  DeviceBuffer x_, y_;
  unsigned grid_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_intensity_sweep_gpu(Backend& b, const Problem& p) {
  return std::make_unique<SweepGpu>(as_gpu(b), p);
}

}  // namespace bwprof
