// rocBLAS behind VendorGemm (AMD). As with cuBLASLt, row-major C = A.B is the column-major product
// C^T = B^T . A^T: rocBLAS sees B as its first operand and A as its second, with no transposes.
// rocBLAS has no fused epilogue, so this `vendor` takes neither a bias nor an activation (the
// `unfused` variant runs rocBLAS's GEMM and then bwprof's bias + activation kernel).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_WITH_VENDOR_BLAS) && defined(BWPROF_HIP)
#include <rocblas/rocblas.h>

#include <limits>

#include "bwprof/error.hpp"
#include "common/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gemm/vendor.hpp"

namespace bwprof {

namespace {

void rb_check(rocblas_status s, const char* call, const char* file, int line) {
  if (s == rocblas_status_success) return;
  const std::string msg = std::string(call) + " failed: " + rocblas_status_to_string(s);
  if (s == rocblas_status_memory_error) throw OutOfMemory(located(msg, file, line));
  throw Error(located(msg, file, line));
}
#define RB_CHECK(expr) rb_check((expr), #expr, __FILE__, __LINE__)

}  // namespace

struct VendorGemm::Impl {
  rocblas_handle handle = nullptr;
  rocblas_datatype type = rocblas_datatype_f32_r;
  rocblas_int M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;
  const void *A = nullptr, *B = nullptr;
  void* C = nullptr;
  float alpha = 1.0f, beta = 0.0f;  // FP32: the compute type for FP32 and FP16 alike
  ~Impl() {
    if (handle) rocblas_destroy_handle(handle);
  }
};

std::string VendorGemm::name() { return "rocblas"; }

void VendorGemm::check_act(Act act) {
  if (act != Act::kNone)
    BWPROF_INVALID("act: rocBLAS has no fused epilogue (variants 'tiled' and 'tensor' fuse the activation; "
                   "'unfused' runs rocBLAS's GEMM, then the activation as a separate kernel)");
}

VendorGemm::VendorGemm(GpuBackend&, DType dtype, Shape s, const void* A, const void* B, void* C, const void* bias,
                       Act act)
    : impl_(std::make_unique<Impl>()) {
  check_act(act);
  if (bias)
    BWPROF_INVALID("bias: rocBLAS has no fused epilogue (variants 'tiled' and 'tensor' fuse the bias; "
                   "'unfused' adds it in a separate kernel)");
  const std::int64_t lim = std::numeric_limits<rocblas_int>::max();
  if (s.M > lim || s.N > lim || s.K > lim || s.lda > lim || s.ldb > lim || s.ldc > lim)
    BWPROF_INVALID("M/N/K: rocBLAS takes 32-bit sizes");
  Impl& m = *impl_;
  m.type = dtype == DType::kF32    ? rocblas_datatype_f32_r
           : dtype == DType::kBF16 ? rocblas_datatype_bf16_r
                                   : rocblas_datatype_f16_r;
  m.M = static_cast<rocblas_int>(s.M), m.N = static_cast<rocblas_int>(s.N), m.K = static_cast<rocblas_int>(s.K);
  m.lda = static_cast<rocblas_int>(s.lda), m.ldb = static_cast<rocblas_int>(s.ldb);
  m.ldc = static_cast<rocblas_int>(s.ldc);
  m.A = A, m.B = B, m.C = C;
  RB_CHECK(rocblas_create_handle(&m.handle));
}

VendorGemm::~VendorGemm() = default;

void VendorGemm::run(hipStream_t stream) {
  Impl& m = *impl_;
  RB_CHECK(rocblas_set_stream(m.handle, stream));
  // Column-major view: D[N,M] = Bcm[N,K] . Acm[K,M], written over C (beta 0).
  RB_CHECK(rocblas_gemm_ex(m.handle, rocblas_operation_none, rocblas_operation_none, m.N, m.M, m.K, &m.alpha, m.B,
                           m.type, m.ldb, m.A, m.type, m.lda, &m.beta, m.C, m.type, m.ldc, m.C, m.type, m.ldc,
                           rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0));
}

}  // namespace bwprof
#endif  // BWPROF_WITH_VENDOR_BLAS && BWPROF_HIP
