// GEMV y = W.x on the GPU: a few threads per row (a whole block for long rows), each with its 16-byte
// loads of W in flight that skip L1, x read through L1, partial sums reduced per row.
#include <string>
#include <vector>
#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "common/gpu_common.hpp"
#include "gemv/gemv.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// `TPR` threads per row (a multiple of the warp, dividing the block), BLOCK / TPR rows per block,
// LOADS 16-byte loads of W a thread a round; the shape is gemv_gpu_shape's (gemv.hpp).
// Measured on an H200 (4096x4096 FP16, L2 flushed): one warp per row with 16 loads per lane in
// flight and x staged in shared memory needed 80-98 registers (25% occupancy, 1.94 waves) and reached
// 1.8 TB/s; a block per row with 2 loads per thread (28 registers, full occupancy, every thread's
// loads issued in its first instructions, no barrier before them) 2.26 TB/s, and 2.47 with the
// weights streamed past L1 (ld.global.nc.L1::no_allocate).
// TPR is a template argument: with it a run-time value (divisions, 38 registers) the same kernel
// took 14.6 us instead of 11.7. The launch bounds leave a thread 32 registers for every 2 loads (2048
// threads an SM at 2, 1024 at 4, 512 at 8); x's vectors are held beside W's, so 4 loads take 50
// and 8 take 80 (capping 8 loads at 64 registers spilled: 21.0 us instead of 12.4 at 4096x4096).
// The shape (session 20, H200, cold single launches, 3 passes each; docs/notes/gemv.md): FP16 rows
// of 256 threads x 2 loads in blocks of 256, the shape until then (chosen on an H100, where 4 loads
// tied with it), took 13.0-13.1 us at 4096x4096 and 32.8-33.1 at 14336x4096; 128 threads x 4 loads,
// one row a block of 128, 11.8-12.0 and 29.4-29.9 (9 blocks of 50 registers an SM: 72 KB of W in
// flight against 64, half the warps to issue and reduce); blocks of 256 holding two such rows
// 12.2-12.5; 8 loads a thread lead only where a row is longer than 128 threads' 4 loads (4096x8192:
// 128 x 8 19.4 against 19.6 for 128 x 4 and 20.3 before; 4096x14336: 256 x 8 30.1-30.5 against
// 32.2-32.5 before). Rows of 1024-2048 elements: 4 loads in blocks of 128 (32 or 64 threads a row)
// 8-12 % faster than before at 8192-16384 rows; at 333-4096 rows from 1.2 % slower to 3.2 %
// faster (FP16 and BF16 alike; BF16 within 1.5 % of FP16). FP32 (8 loads past 512 vectors): from
// 10 % faster (333x4096) to 9 % slower (1024x4096, 9.26 against 8.51 us), so FP32 keeps the shape
// of before. Blocks of 512 or 1024 holding rows of 256 threads (a knob until then) lost on the H200
// (14.2 and 38.5 us at the two shapes) and were not the fastest on the H100 either.
template <class T, int TPR, int BLOCK, int LOADS>
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

// Calls f(kernel) with the kernel of `s`'s shape: the shapes gemv_gpu_shape answers are instantiated,
// no other (blocks of 256 with 2 loads a thread; of 128 with 4 or 8, or of a row's 256 with 8).
template <class T, int BLOCK, int LOADS, class F>
auto with_rows(int tpr, F&& f) {
  if constexpr (BLOCK == 256) {
    if (tpr == 256) return f(bwprof_gemv<T, 256, 256, LOADS>);
  }
  if (tpr == 128) return f(bwprof_gemv<T, 128, BLOCK, LOADS>);
  if (tpr == 64) return f(bwprof_gemv<T, 64, BLOCK, LOADS>);
  return f(bwprof_gemv<T, 32, BLOCK, LOADS>);
}
template <class T, class F>
auto with_shape(const GemvGpuShape& s, F&& f) {
  if constexpr (sizeof(T) == 2) {  // 16-bit rows read in vectors: 4 or 8 loads a thread
    if (s.loads == 8 && s.block == 256) return f(bwprof_gemv<T, 256, 256, 8>);
    if (s.loads == 8) return with_rows<T, 128, 8>(s.tpr, f);
    if (s.loads == 4) return with_rows<T, 128, 4>(s.tpr, f);
  }
  return with_rows<T, 256, 2>(s.tpr, f);
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
    shape_ = gemv_gpu_shape(p.i("K"), static_cast<int>(dtype_size(p.dtype)), g.warp_size());
    // (with_shape instantiates the shapes the rule answers: 2 loads in blocks of 256, 4 or 8 in blocks
    // of 128 or a row's 256)
    if (!(shape_.loads == 2 && shape_.block == 256) && !(shape_.loads != 2 && (shape_.block == 128 || shape_.tpr == 256)))
      throw Error("internal: the GEMV has no kernel of " + std::to_string(shape_.loads) + " loads in blocks of " +
                  std::to_string(shape_.block));
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
      return with_shape<T>(shape_, [&](auto fn) { return kernel_resources(fn, shape_.block); });
    });
  }

 private:
  template <class T>
  void run() {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const T* W = W_[next_].get<T>();
    next_ = (next_ + 1) % W_.size();
    const int rows = shape_.block / shape_.tpr;
    const unsigned grid = static_cast<unsigned>((N + rows - 1) / rows);
    with_shape<T>(shape_, [&](auto fn) {
      fn<<<grid, shape_.block, 0, g_.stream()>>>(W, x_.get<T>(), y_.get<T>(), N, K);
      return 0;
    });
    BWPROF_CHECK_LAUNCH("bwprof_gemv");
  }

  GpuBackend& g_;
  Problem p_;
  GemvData host_;
  std::vector<DeviceBuffer> W_;
  DeviceBuffer x_, y_;
  std::size_t next_ = 0;
  GemvGpuShape shape_{};
};

}  // namespace

std::unique_ptr<KernelInstance> make_gemv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
