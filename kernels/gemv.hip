// GEMV y = W.x on the GPU: one warp per output row, 16-byte loads along K, all of a row in flight.
#include "bwprof/error.hpp"
#include "cpu/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kUnroll = 16;

// x is staged in shared memory once per block; each lane keeps kUnroll 16-byte loads of its row in
// flight, so a 4096-wide FP16 row (16 vectors per lane) is requested in one round trip.
template <class T>
__global__ void __launch_bounds__(kBlock) bwprof_gemv(const T* __restrict__ W, const T* __restrict__ x,
                                                      T* __restrict__ y, int N, int K, bool stage_x) {
  constexpr int V = Elems<T>::kVec;
  extern __shared__ uint4 smem[];  // K elements of x (as 16-byte vectors when K % V == 0)
  const int warps = blockDim.x / warpSize;
  const int row = blockIdx.x * warps + threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  float acc = 0.f;
  if (K % V == 0) {
    const int kvec = K / V;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    const uint4* wr = reinterpret_cast<const uint4*>(W + static_cast<std::size_t>(row < N ? row : 0) * K);
    // The first loads of W go out before x is staged, so the two latencies overlap.
    uint4 wv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = lane + u * warpSize;
      if (i < kvec) wv[u] = wr[i];
    }
    if (stage_x) {
      for (int i = threadIdx.x; i < kvec; i += blockDim.x) smem[i] = xv[i];
      __syncthreads();
    }
    const uint4* xs = stage_x ? smem : xv;
    if (row >= N) return;
    for (int base = lane; base < kvec; base += warpSize * kUnroll) {
      if (base != lane) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int i = base + u * warpSize;
          if (i < kvec) wv[u] = wr[i];
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * warpSize;
        if (i >= kvec) continue;
        float fw[V], fx[V];
        unpack<T>(wv[u], fw);
        unpack<T>(xs[i], fx);
#pragma unroll
        for (int e = 0; e < V; ++e) acc += fw[e] * fx[e];
      }
    }
  } else {
    if (row >= N) return;
    const T* wr = W + static_cast<std::size_t>(row) * K;
    for (int k = lane; k < K; k += warpSize) acc += to_f(wr[k]) * to_f(x[k]);
  }
  acc = warp_sum(acc);
  if (lane == 0) y[row] = from_f<T>(acc);
}

class GemvGpu final : public KernelInstance {
 public:
  GemvGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_gemv_data(p)) {
    if (p.i("N") > 2147483647 || p.i("K") > 2147483647) throw InvalidArgument("N/K: at most 2^31-1 on the GPU");
    W_ = DeviceBuffer::from(host_.W, "GEMV W");
    x_ = DeviceBuffer::from(host_.x, "GEMV x");
    y_ = DeviceBuffer::from(host_.y, "GEMV y");
    stage_x_ = K_vectorized() && p.i("K") * dtype_size(p.dtype) <= (1 << 20);
    if (stage_x_ && smem_bytes() > 48 * 1024) {  // a larger x needs the opt-in shared-memory limit
      auto k = p.dtype == DType::kF32 ? reinterpret_cast<const void*>(bwprof_gemv<float>)
                                      : reinterpret_cast<const void*>(bwprof_gemv<__half>);
      if (hipFuncSetAttribute(k, hipFuncAttributeMaxDynamicSharedMemorySize, smem_bytes()) != hipSuccess) {
        (void)hipGetLastError();
        stage_x_ = false;  // too large for shared memory: read x through the cache instead
      }
    }
  }
  bool K_vectorized() const { return p_.i("K") % (p_.dtype == DType::kF32 ? 4 : 8) == 0; }
  int smem_bytes() const { return stage_x_ ? static_cast<int>(p_.i("K") * dtype_size(p_.dtype)) : 0; }
  void launch() override {
    if (p_.dtype == DType::kF32) run<float>(); else run<__half>();
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.y);
    return gemv_check(host_, p_);
  }
  Resources resources() const override {
    return p_.dtype == DType::kF32 ? kernel_resources(bwprof_gemv<float>, kBlock, smem_bytes())
                                   : kernel_resources(bwprof_gemv<__half>, kBlock, smem_bytes());
  }

 private:
  template <class T>
  void run() {
    const int warp = g_.warp_size();  // 64 on CDNA wavefronts
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const int rows_per_block = kBlock / warp;
    bwprof_gemv<T><<<(N + rows_per_block - 1) / rows_per_block, kBlock, smem_bytes(), g_.stream()>>>(
        W_.get<T>(), x_.get<T>(), y_.get<T>(), N, K, stage_x_);
    BWPROF_CHECK_LAUNCH("bwprof_gemv");
  }

  GpuBackend& g_;
  Problem p_;
  GemvData host_;
  DeviceBuffer W_, x_, y_;
  bool stage_x_ = false;
};

}  // namespace

std::unique_ptr<KernelInstance> make_gemv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
