// Launchers that one kernel file offers another (GPU compilers only): the unfused GEMM reuses the
// bias + activation kernel, the QKV projection reuses the GEMM kernels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bwprof/kernel.hpp"
#include "cpu/reference.hpp"
#include "gpu_runtime.hpp"

namespace bwprof {

class GpuBackend;

// y = act(x + bias[col]) over n elements of rows `cols` wide; bias may be null (activation only,
// in place when x == y).
void launch_bias_act(DType dtype, const void* x, const void* bias, void* y, std::size_t n, int cols, Act act,
                     int sms, hipStream_t stream);
Resources bias_act_resources(DType dtype, Act act);

// One GEMM C[M,N] = act(A[M,K] . B[K,N] + bias[N]) (row-major, leading dimensions lda/ldb/ldc) on
// a chosen engine, buffers fixed at construction.
class GemmRunner {
 public:
  enum class Engine { kTiled, kTensor, kVendor };
  struct Shape {
    std::int64_t M, N, K, lda, ldb, ldc;
  };
  virtual ~GemmRunner() = default;
  virtual void run(hipStream_t stream) = 0;
  virtual Resources resources() const = 0;
  // InvalidArgument (naming what is available) where the engine cannot run on this device/dtype.
  static std::unique_ptr<GemmRunner> make(GpuBackend& g, DType dtype, Engine e, Shape s, const void* A,
                                          const void* B, void* C, const void* bias, Act act);
  // The best engine this build and device have for `dtype`: vendor, else tensor (FP16), else tiled.
  static Engine best(GpuBackend& g, DType dtype);
};

}  // namespace bwprof
