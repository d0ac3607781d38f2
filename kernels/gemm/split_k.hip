// Split K, shared by the `tensor` engines: where a GEMM has too few output tiles to fill the GPU,
// several blocks take one tile each over a part of K and add their FP32 partial sums into one
// accumulator [M, N] (atomically, in L2; rows split_acc_ld(N) floats apart, choice.hpp); a second
// kernel then applies the bias and activation, stores C and zeroes the accumulator for the next
// launch. The accumulator is M x split_acc_ld(N) floats whatever the number of splits, so the
// family's footprint knows it.
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

template <class T, int A>
__global__ void __launch_bounds__(256) bwprof_gemm_split_finish(float* __restrict__ acc, const T* __restrict__ bias,
                                                                T* __restrict__ C, int M, int N, int ldc) {
  const std::size_t mn = static_cast<std::size_t>(M) * N;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int n = static_cast<int>(i % N);
    float* a = acc + (i / N) * gemm::split_acc_ld(N) + n;
    const float v = *a + (bias ? to_f(bias[n]) : 0.f);
    *a = 0.f;
    C[(i / N) * ldc + n] = from_f<T>(act<A>(v));
  }
}

}  // namespace

DeviceBuffer gemm::split_accumulator(std::int64_t M, std::int64_t N) {
  DeviceBuffer acc(static_cast<std::size_t>(M) * static_cast<std::size_t>(split_acc_ld(N)) * sizeof(float),
                   "GEMM split-K accumulator");
  acc.fill(0);
  return acc;
}

void gemm::split_finish(DType dtype, Act a, float* acc, const void* bias, void* C, std::int64_t M, std::int64_t N,
                        std::int64_t ldc, int sms, hipStream_t st) {
  by_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    with_act(a, [&](auto ac) {
      bwprof_gemm_split_finish<T, decltype(ac)::value>
          <<<grid_for(static_cast<std::size_t>(M) * N, 256, sms, 4), 256, 0, st>>>(
              acc, static_cast<const T*>(bias), static_cast<T*>(C), int(M), int(N), int(ldc));
      BWPROF_CHECK_LAUNCH("bwprof_gemm_split_finish");
    });
  });
}

}  // namespace bwprof
