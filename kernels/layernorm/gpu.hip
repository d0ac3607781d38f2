// Layer norm on the GPU: one block per row, the row held in registers as 16-byte vectors so it is
// read from memory once; FP32 statistics (mean, then the variance around it).
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "layernorm/layernorm.hpp"

namespace bwprof {

namespace {

using namespace gpu;

template <class T, int MAXV>
__global__ void __launch_bounds__(256) bwprof_layernorm(const T* __restrict__ x, const T* __restrict__ w,
                                                        const T* __restrict__ b, T* __restrict__ y, int cols,
                                                        float eps) {
  constexpr int V = Elems<T>::kVec;
  __shared__ float scratch[32];
  const int nvec = cols / V;
  const uint4* xr = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(blockIdx.x) * cols);
  uint4* yr = reinterpret_cast<uint4*>(y + static_cast<std::size_t>(blockIdx.x) * cols);
  float v[MAXV][V];
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < MAXV; ++j) {
    const int i = threadIdx.x + j * blockDim.x;
    if (i < nvec) {
      unpack<T>(xr[i], v[j]);
#pragma unroll
      for (int e = 0; e < V; ++e) sum += v[j][e];
    }
  }
  const float mean = block_sum(sum, scratch) / cols;
  float sq = 0.f;
#pragma unroll
  for (int j = 0; j < MAXV; ++j) {
    if (threadIdx.x + j * blockDim.x < nvec) {
#pragma unroll
      for (int e = 0; e < V; ++e) sq += (v[j][e] - mean) * (v[j][e] - mean);
    }
  }
  const float rstd = rsqrtf(block_sum(sq, scratch) / cols + eps);
  const uint4* wv = reinterpret_cast<const uint4*>(w);
  const uint4* bv = reinterpret_cast<const uint4*>(b);
#pragma unroll
  for (int j = 0; j < MAXV; ++j) {
    const int i = threadIdx.x + j * blockDim.x;
    if (i < nvec) {
      float fw[V], fb[V], o[V];
      unpack<T>(wv[i], fw);
      unpack<T>(bv[i], fb);
#pragma unroll
      for (int e = 0; e < V; ++e) o[e] = (v[j][e] - mean) * rstd * fw[e] + fb[e];
      yr[i] = pack<T>(o);
    }
  }
}

// Any width: three passes over the row (the second and third hit the cache).
template <class T>
__global__ void __launch_bounds__(256) bwprof_layernorm_any(const T* __restrict__ x, const T* __restrict__ w,
                                                            const T* __restrict__ b, T* __restrict__ y, int cols,
                                                            float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<std::size_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<std::size_t>(blockIdx.x) * cols;
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += to_f(xr[c]);
  const float mean = block_sum(sum, scratch) / cols;
  float sq = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = to_f(xr[c]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(block_sum(sq, scratch) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = from_f<T>((to_f(xr[c]) - mean) * rstd * to_f(w[c]) + to_f(b[c]));
}

class LayerNormGpu final : public KernelInstance {
 public:
  LayerNormGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_layernorm_data(p)) {
    rows_ = static_cast<int>(p.i("rows"));
    cols_ = static_cast<int>(p.i("cols"));
    if (p.i("rows") > 2147483647 || p.i("cols") > 2147483647) throw InvalidArgument("rows/cols: at most 2^31-1 on the GPU");
    x_ = DeviceBuffer::from(host_.x, "layer norm x");
    w_ = DeviceBuffer::from(host_.weight, "layer norm weight");
    b_ = DeviceBuffer::from(host_.bias, "layer norm bias");
    y_ = DeviceBuffer::from(host_.y, "layer norm y");
    const int V = p.dtype == DType::kF32 ? 4 : 8;
    const int nvec = cols_ / V;
    threads_ = 256;
    maxv_ = 0;
    if (cols_ % V == 0) {
      const int t = std::min(256, std::max(32, (nvec + 31) / 32 * 32));
      const int per = (nvec + t - 1) / t;
      if (per <= 8) {
        threads_ = t;
        maxv_ = per <= 1 ? 1 : per <= 2 ? 2 : per <= 4 ? 4 : 8;
      }
    }
  }

  void launch() override {
    by_dtype(p_.dtype, [&](auto t) { run<typename decltype(t)::type>(); });
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return layernorm_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) { return res<typename decltype(t)::type>(); });
  }

 private:
  template <class T>
  auto kernel() const {
    switch (maxv_) {
      case 1: return &bwprof_layernorm<T, 1>;
      case 2: return &bwprof_layernorm<T, 2>;
      case 4: return &bwprof_layernorm<T, 4>;
      case 8: return &bwprof_layernorm<T, 8>;
      default: return &bwprof_layernorm_any<T>;
    }
  }
  template <class T>
  Resources res() const { return kernel_resources(kernel<T>(), threads_); }
  template <class T>
  void run() {
    kernel<T>()<<<rows_, threads_, 0, g_.stream()>>>(x_.get<T>(), w_.get<T>(), b_.get<T>(), y_.get<T>(), cols_,
                                                   kLayerNormEps);
    BWPROF_CHECK_LAUNCH("bwprof_layernorm");
  }

  GpuBackend& g_;
  Problem p_;
  LayerNormData host_;
  DeviceBuffer x_, w_, b_, y_;
  int rows_ = 0, cols_ = 0, threads_ = 256, maxv_ = 0;
};

}  // namespace

std::unique_ptr<KernelInstance> make_layernorm_gpu(Backend& b, const Problem& p) {
  return std::make_unique<LayerNormGpu>(as_gpu(b), p);
}

}  // namespace bwprof
