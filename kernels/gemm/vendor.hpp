// The vendor's GEMM library (cuBLASLt on NVIDIA, rocBLAS on AMD) behind one small class: the GEMM
// family's `vendor` engine (vendor_cublaslt.hip, vendor_rocblas.hip), so that the other engines name
// no vendor library. Compiled only where CMake found the library (BWPROF_WITH_VENDOR_BLAS);
// elsewhere the `vendor` variants are simply absent from the registry.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bwprof/dtype.hpp"
#include "common/gpu_runtime.hpp"

namespace bwprof {

class GpuBackend;
enum class Act;

// C[M,N] = act(A[M,K] . B[K,N] + bias[N]), all row-major with leading dimensions lda/ldb/ldc,
// FP32 accumulation, the bias and activation in the library's epilogue when asked for.
class VendorGemm {
 public:
  struct Shape {
    std::int64_t M, N, K, lda, ldb, ldc;
  };
  // The buffers are fixed at construction: the fastest of the library's candidate algorithms is
  // chosen by timing them on these buffers once.
  VendorGemm(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B, void* C, const void* bias, Act act);
  ~VendorGemm();
  VendorGemm(const VendorGemm&) = delete;
  VendorGemm& operator=(const VendorGemm&) = delete;
  void run(hipStream_t stream);
  // Whether the library's epilogue can apply `act` (InvalidArgument names the ones it has).
  // rocBLAS has no epilogue: there a bias or an activation is an InvalidArgument.
  static void check_act(Act act);
  static std::string name();  // "cublasLt" or "rocblas"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bwprof
