// GEMV y = W.x on the GPU: a few threads per row (a whole block for long rows), each with two
// 16-byte loads of W in flight that skip L1, x read through L1, partial sums reduced per row.
#include <vector>
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "gemv/gemv.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kLoads = 2;  // 16-byte loads of W per thread per round

// `tpr` threads per row (a multiple of the warp, dividing the block), blockDim / tpr rows per block.
// Measured on an H200 (4096x4096 FP16, L2 flushed): one warp per row with 16 loads per lane in
// flight and x staged in shared memory needed 80-98 registers (25% occupancy, 1.94 waves) and reached
// 1.8 TB/s; a block per row with 2 loads per thread (28 registers, full occupancy, every thread's
// loads issued in its first instructions, no barrier before them) 2.26 TB/s, and 2.47 with the
// weights streamed past L1 (ld.global.nc.L1::no_allocate).
// TPR is a template argument: with it a run-time value (divisions, 38 registers) the same kernel
// took 14.6 us instead of 11.7. At most 32 registers, so that 8 blocks fit on an SM.
template <class T, int TPR>
__global__ void __launch_bounds__(kBlock, 8) bwprof_gemv(const T* __restrict__ W, const T* __restrict__ x,
                                                         T* __restrict__ y, int N, int K) {
  constexpr int V = Elems<T>::kVec;
  constexpr int tpr = TPR;
  __shared__ float red[kBlock / 32];  // one partial sum per warp of the block
  const int r = threadIdx.x / tpr, j = threadIdx.x % tpr;
  const int row = blockIdx.x * (kBlock / tpr) + r;
  const T* wrow = W + static_cast<std::size_t>(row < N ? row : N - 1) * K;
  float acc = 0.f;
  if (K % V == 0) {  // rows start 16-byte aligned
    const int kvec = K / V;
    const uint4* wr = reinterpret_cast<const uint4*>(wrow);
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    for (int base = j; base < kvec; base += tpr * kLoads) {
      uint4 wv[kLoads], xx[kLoads];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const int i = base + u * tpr;
        if (i < kvec) wv[u] = load_stream(wr + i);
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const int i = base + u * tpr;
        if (i < kvec) xx[u] = xv[i];
      }
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        if (base + u * tpr >= kvec) continue;
        float fw[V], fx[V];
        unpack<T>(wv[u], fw);
        unpack<T>(xx[u], fx);
#pragma unroll
        for (int e = 0; e < V; ++e) acc += fw[e] * fx[e];
      }
    }
  } else {
    for (int k = j; k < K; k += tpr) acc += to_f(wrow[k]) * to_f(x[k]);
  }
  acc = warp_sum(acc);
  const int wpr = tpr / warpSize;  // the same for the whole block
  if (wpr > 1) {
    if (threadIdx.x % warpSize == 0) red[threadIdx.x / warpSize] = acc;
    __syncthreads();
    if (j == 0) {
      acc = 0.f;
      for (int w = 0; w < wpr; ++w) acc += red[r * wpr + w];
    }
  }
  if (j == 0 && row < N) y[row] = from_f<T>(acc);
}

class GemvGpu final : public KernelInstance {
 public:
  GemvGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_gemv_data(p)) {
    if (p.i("N") > 2147483647 || p.i("K") > 2147483647) throw InvalidArgument("N/K: at most 2^31-1 on the GPU");
    // `rotate` copies of W, used in turn: hot runs then read W from DRAM once the copies together
    // exceed the L2 (the other way, beside the flush, to keep a cache from holding the weights).
    const std::int64_t R = p.i("rotate");
    if (R > 64) throw InvalidArgument("rotate: at most 64 copies of W");
    W_.push_back(DeviceBuffer::from(host_.W, "GEMV W"));
    for (std::int64_t r = 1; r < R; ++r) {
      W_.push_back(DeviceBuffer(W_[0].bytes(), "GEMV W copy"));
      BWPROF_GPU_CHECK(hipMemcpy(W_.back().get(), W_[0].get(), W_[0].bytes(), hipMemcpyDeviceToDevice));
    }
    x_ = DeviceBuffer::from(host_.x, "GEMV x");
    y_ = DeviceBuffer::from(host_.y, "GEMV y");
    // Threads per row: the fewest (a power of two times the warp, at most the block) whose loads
    // cover the row in one round; a whole block for rows of 512 vectors and more.
    const int warp = g.warp_size();
    const std::int64_t K = p.i("K"), V = 16 / dtype_size(p.dtype);
    const std::int64_t units = K % V == 0 ? (K / V + kLoads - 1) / kLoads : K;
    tpr_ = warp;
    while (tpr_ < kBlock && tpr_ < units) tpr_ *= 2;
  }
  void launch() override {
    by_dtype(p_.dtype, [&](auto t) { run<typename decltype(t)::type>(); });
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return gemv_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) {
      return kernel_resources(bwprof_gemv<typename decltype(t)::type, kBlock>, kBlock);
    });
  }

 private:
  template <class T>
  void run() {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const T* W = W_[next_].get<T>();
    next_ = (next_ + 1) % W_.size();
    const unsigned grid = static_cast<unsigned>((N + kBlock / tpr_ - 1) / (kBlock / tpr_));
    switch (tpr_) {
      case 32: bwprof_gemv<T, 32><<<grid, kBlock, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K); break;
      case 64: bwprof_gemv<T, 64><<<grid, kBlock, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K); break;
      case 128: bwprof_gemv<T, 128><<<grid, kBlock, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K); break;
      default: bwprof_gemv<T, kBlock><<<grid, kBlock, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K);
    }
    BWPROF_CHECK_LAUNCH("bwprof_gemv");
  }

  GpuBackend& g_;
  Problem p_;
  GemvData host_;
  std::vector<DeviceBuffer> W_;
  DeviceBuffer x_, y_;
  std::size_t next_ = 0;
  int tpr_ = 32;
};

}  // namespace

std::unique_ptr<KernelInstance> make_gemv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
