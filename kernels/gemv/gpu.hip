// GEMV y = W.x on the GPU: a few threads per row (a whole block for long rows), each with two
// 16-byte loads of W in flight that skip L1, x read through L1, partial sums reduced per row.
#include <cstdlib>
#include <string>
#include <vector>
#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "gemv/gemv.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;
constexpr int kLoads = 2;  // 16-byte loads of W per thread per round (BWPROF_GEMV_LOADS=4: 4)

// `tpr` threads per row (a multiple of the warp, dividing the block), blockDim / tpr rows per block.
// Measured on an H200 (4096x4096 FP16, L2 flushed): one warp per row with 16 loads per lane in
// flight and x staged in shared memory needed 80-98 registers (25% occupancy, 1.94 waves) and reached
// 1.8 TB/s; a block per row with 2 loads per thread (28 registers, full occupancy, every thread's
// loads issued in its first instructions, no barrier before them) 2.26 TB/s, and 2.47 with the
// weights streamed past L1 (ld.global.nc.L1::no_allocate).
// TPR is a template argument: with it a run-time value (divisions, 38 registers) the same kernel
// took 14.6 us instead of 11.7. At most 32 registers, so that 2048 threads fit on an SM.
// BLOCK: threads a block (256; 512 or 1024 put 2 or 4 rows of 256 threads in one block, fewer
// blocks to launch: a tuning knob, BWPROF_GEMV_BLOCK). LOADS: 16-byte loads of W a thread a round
// (2; BWPROF_GEMV_LOADS=4: half the threads a row, twice the loads each in flight, and so as many
// bytes in flight an SM at half the threads, with the 64 registers that takes).
template <class T, int TPR, int BLOCK = kBlock, int LOADS = kLoads>
__global__ void __launch_bounds__(BLOCK, 2048 / BLOCK * 2 / LOADS) bwprof_gemv(const T* __restrict__ W, const T* __restrict__ x,
                                                                 T* __restrict__ y, int N, int K) {
  constexpr int V = Elems<T>::kVec;
  constexpr int tpr = TPR;
  __shared__ float red[BLOCK / 32];  // one partial sum per warp of the block
  const int r = threadIdx.x / tpr, j = threadIdx.x % tpr;
  const int row = blockIdx.x * (BLOCK / tpr) + r;
  const T* wrow = W + static_cast<std::size_t>(row < N ? row : N - 1) * K;
  float acc = 0.f;
  if (K % V == 0) {  // rows start 16-byte aligned
    const int kvec = K / V;
    const uint4* wr = reinterpret_cast<const uint4*>(wrow);
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    for (int base = j; base < kvec; base += tpr * LOADS) {
      uint4 wv[LOADS], xx[LOADS];
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int i = base + u * tpr;
        if (i < kvec) wv[u] = load_stream(wr + i);
      }
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int i = base + u * tpr;
        if (i < kvec) xx[u] = xv[i];
      }
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
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
      // A device-to-device copy returns before it is done, on the default stream that the backend's
      // non-blocking stream does not wait for.
      BWPROF_GPU_CHECK(hipStreamSynchronize(nullptr));
    }
    x_ = DeviceBuffer::from(host_.x, "GEMV x");
    y_ = DeviceBuffer::from(host_.y, "GEMV y");
    // Threads per row: the fewest (a power of two times the warp, at most the block) whose loads
    // cover the row in one round; a whole block for rows of 512 vectors and more.
    const int warp = g.warp_size();
    const std::int64_t K = p.i("K"), V = 16 / dtype_size(p.dtype);
    if (knob_choice("BWPROF_GEMV_LOADS", {"2", "4"}) == 1) loads_ = 4;  // loads a thread
    const std::int64_t units = K % V == 0 ? (K / V + loads_ - 1) / loads_ : K;
    tpr_ = warp;
    while (tpr_ < kBlock && tpr_ < units) tpr_ *= 2;
    // A tuning knob for benchmarks: BWPROF_GEMV_BLOCK=512|1024 puts 2 or 4 rows of 256 threads in
    // one block (rows of 256 threads only; others keep 256-thread blocks).
    if (const auto b = knob_choice("BWPROF_GEMV_BLOCK", {"256", "512", "1024"}); b && tpr_ == kBlock) block_ = 256 << *b;
  }
  // Calls f(kernel) with the 256-thread kernel of this instance's threads a row.
  template <class T, int LOADS, class F>
  auto with_tpr(F&& f) const {
    switch (tpr_) {
      case 32: return f(bwprof_gemv<T, 32, kBlock, LOADS>);
      case 64: return f(bwprof_gemv<T, 64, kBlock, LOADS>);
      case 128: return f(bwprof_gemv<T, 128, kBlock, LOADS>);
      default: return f(bwprof_gemv<T, kBlock, kBlock, LOADS>);
    }
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
      using T = typename decltype(t)::type;
      if (block_ == 512) return kernel_resources(bwprof_gemv<T, kBlock, 512>, 512);
      if (block_ == 1024) return kernel_resources(bwprof_gemv<T, kBlock, 1024>, 1024);
      if (loads_ == 4) return with_tpr<T, 4>([](auto fn) { return kernel_resources(fn, kBlock); });
      return with_tpr<T, kLoads>([](auto fn) { return kernel_resources(fn, kBlock); });
    });
  }

 private:
  template <class T>
  void run() {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const T* W = W_[next_].get<T>();
    next_ = (next_ + 1) % W_.size();
    if (block_ == 512 || block_ == 1024) {  // rows of 256 threads, 2 or 4 a block
      const int rows = block_ / kBlock;
      const unsigned g = static_cast<unsigned>((N + rows - 1) / rows);
      if (block_ == 512) bwprof_gemv<T, kBlock, 512><<<g, 512, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K);
      else bwprof_gemv<T, kBlock, 1024><<<g, 1024, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K);
      BWPROF_CHECK_LAUNCH("bwprof_gemv");
      return;
    }
    const unsigned grid = static_cast<unsigned>((N + kBlock / tpr_ - 1) / (kBlock / tpr_));
    auto go = [&](auto fn) {
      fn<<<grid, kBlock, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K);
      return 0;
    };
    if (loads_ == 4) with_tpr<T, 4>(go); else with_tpr<T, kLoads>(go);
    BWPROF_CHECK_LAUNCH("bwprof_gemv");
  }

  GpuBackend& g_;
  Problem p_;
  GemvData host_;
  std::vector<DeviceBuffer> W_;
  DeviceBuffer x_, y_;
  std::size_t next_ = 0;
  int tpr_ = 32, block_ = kBlock, loads_ = kLoads;
};

}  // namespace

std::unique_ptr<KernelInstance> make_gemv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
