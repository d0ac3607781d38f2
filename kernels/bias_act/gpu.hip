// Bias + activation on the GPU: fused in one pass (16-byte vectors), and the unfused two-kernel
// form (add the bias, then apply the activation in place) for comparison.
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "bias_act/bias_act.hpp"
#include "bias_act/launch.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kUnroll = 4;

// y = act(x + bias[col]); STAGE 0: both (fused), 1: the add only, 2: the activation only (in place,
// so x and y are not __restrict__).
template <class T, int A, int STAGE>
__global__ void __launch_bounds__(kBlock) bwprof_bias_act(const T* x, const T* __restrict__ bias,
                                                          T* y, std::size_t n, int cols) {
  constexpr int V = Elems<T>::kVec;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (cols % V == 0) {
    const std::size_t nvec = n / V;
    const int cvec = cols / V;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    const uint4* bv = reinterpret_cast<const uint4*>(bias);
    uint4* yv = reinterpret_cast<uint4*>(y);
    for (std::size_t base = first; base < nvec; base += stride * kUnroll) {
      uint4 xr[kUnroll], br[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t i = base + u * stride;
        if (i < nvec) {
          xr[u] = xv[i];
          // A 32-bit modulo where the index allows: the 64-bit one costs more than the activation.
          if (STAGE != 2) br[u] = bv[nvec < 0xffffffffull ? static_cast<unsigned>(i) % cvec : i % cvec];
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::size_t i = base + u * stride;
        if (i >= nvec) continue;
        float fx[V], fb[V];
        unpack<T>(xr[u], fx);
        if (STAGE != 2) unpack<T>(br[u], fb);
#pragma unroll
        for (int e = 0; e < V; ++e) {
          float t = STAGE == 2 ? fx[e] : fx[e] + fb[e];
          fx[e] = STAGE == 1 ? t : act<A>(t);
        }
        yv[i] = pack<T>(fx);
      }
    }
    return;
  }
  for (std::size_t i = first; i < n; i += stride) {
    float t = to_f(x[i]);
    if (STAGE != 2) t += to_f(bias[i % cols]);
    y[i] = from_f<T>(STAGE == 1 ? t : act<A>(t));
  }
}

class BiasActGpu final : public KernelInstance {
 public:
  BiasActGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_bias_act_data(p)) {
    act_ = parse_act(p.s("act"));
    fused_ = p.variant != "unfused";
    x_ = DeviceBuffer::from(host_.x, "x");
    b_ = DeviceBuffer::from(host_.bias, "bias");
    y_ = DeviceBuffer::from(host_.y, "y");
    grid_ = grid_for(host_.x.size() / 4 + 1, kBlock, g.sm_count(), 16);
  }
  void launch() override {
    by_dtype(p_.dtype, [&](auto t) { by_act<typename decltype(t)::type>(); });
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return bias_act_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) {
      return kernel_resources(bwprof_bias_act<typename decltype(t)::type, kActGelu, 0>, kBlock);
    });
  }

 private:
  template <class T>
  void by_act() {
    switch (act_) {
      case Act::kRelu: run<T, kActRelu>(); break;
      case Act::kGelu: run<T, kActGelu>(); break;
      case Act::kSilu: run<T, kActSilu>(); break;
      default: run<T, kActNone>();
    }
  }
  template <class T, int A>
  void run() {
    const std::size_t n = host_.x.size();
    const int cols = static_cast<int>(p_.i("cols"));
    hipStream_t s = g_.stream();
    if (fused_) {
      bwprof_bias_act<T, A, 0><<<grid_, kBlock, 0, s>>>(x_.get<T>(), b_.get<T>(), y_.get<T>(), n, cols);
    } else {
      bwprof_bias_act<T, A, 1><<<grid_, kBlock, 0, s>>>(x_.get<T>(), b_.get<T>(), y_.get<T>(), n, cols);
      bwprof_bias_act<T, A, 2><<<grid_, kBlock, 0, s>>>(y_.get<T>(), nullptr, y_.get<T>(), n, cols);
    }
    BWPROF_CHECK_LAUNCH("bwprof_bias_act");
  }

  GpuBackend& g_;
  Problem p_;
  BiasActData host_;
  Act act_;
  bool fused_;
  DeviceBuffer x_, b_, y_;
  unsigned grid_ = 1;
};

template <class T, int A>
void launch_typed(const void* x, const void* bias, void* y, std::size_t n, int cols, unsigned grid, hipStream_t s) {
  if (bias)
    bwprof_bias_act<T, A, 0><<<grid, kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(bias),
                                                      static_cast<T*>(y), n, cols);
  else
    bwprof_bias_act<T, A, 2><<<grid, kBlock, 0, s>>>(static_cast<const T*>(x), nullptr, static_cast<T*>(y), n, cols);
}

template <class T>
void launch_by_act(Act act, const void* x, const void* bias, void* y, std::size_t n, int cols, unsigned grid,
                   hipStream_t s) {
  switch (act) {
    case Act::kRelu: launch_typed<T, kActRelu>(x, bias, y, n, cols, grid, s); break;
    case Act::kGelu: launch_typed<T, kActGelu>(x, bias, y, n, cols, grid, s); break;
    case Act::kSilu: launch_typed<T, kActSilu>(x, bias, y, n, cols, grid, s); break;
    default: launch_typed<T, kActNone>(x, bias, y, n, cols, grid, s);
  }
}

}  // namespace

void launch_bias_act(DType dtype, const void* x, const void* bias, void* y, std::size_t n, int cols, Act act,
                     int sms, hipStream_t stream) {
  const unsigned grid = grid_for(n / 4 + 1, kBlock, sms, 8);
  by_dtype(dtype, [&](auto t) { launch_by_act<typename decltype(t)::type>(act, x, bias, y, n, cols, grid, stream); });
  BWPROF_CHECK_LAUNCH("bwprof_bias_act");
}

Resources bias_act_resources(DType dtype, Act act) {
  (void)act;  // every activation's instance has the fused kernel's shape; GELU's is reported
  return by_dtype(dtype, [&](auto t) {
    return kernel_resources(bwprof_bias_act<typename decltype(t)::type, kActGelu, 0>, kBlock);
  });
}

std::unique_ptr<KernelInstance> make_bias_act_gpu(Backend& b, const Problem& p) {
  return std::make_unique<BiasActGpu>(as_gpu(b), p);
}

}  // namespace bwprof
