// cuBLASLt (and, for plain GEMMs, cuBLAS) behind VendorGemm. Row-major C = A.B is the column-major
// product C^T = B^T . A^T, so the library sees B as its first operand and A as its second, with no
// transposes; the bias then runs along the library's rows, which is what its BIAS epilogues
// broadcast over. The fastest of cuBLASLt's candidates, and for matrix-vector shapes also cuBLAS's
// own choice (cublasGemmEx, the call PyTorch's matmul makes; it reaches GEMV kernels that cuBLASLt
// does not), is kept, each timed as bwprof times a cold run.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_WITH_VENDOR_BLAS) && defined(BWPROF_CUDA)  // AMD: vendor_rocblas.hip
#include "gemm/vendor.hpp"

#include <algorithm>
#include <vector>

#include "bwprof/error.hpp"
#include "common/reference.hpp"
#include "gpu/gpu_backend.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

namespace bwprof {

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;
constexpr int kCandidates = 32;

// cuBLASLt and cuBLAS share one status type; cuBLAS names its values.
void blas_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string msg = std::string(call) + " failed: " + cublasGetStatusName(s) + ": " + cublasGetStatusString(s);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(located(msg, file, line));
  throw Error(located(msg, file, line));
}
#define BLAS_CHECK(expr) blas_check((expr), #expr, __FILE__, __LINE__)

cublasLtEpilogue_t epilogue_for(bool bias, Act act) {
  switch (act) {
    case Act::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Act::kGelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

}  // namespace

struct VendorGemm::Impl {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo{};
  DeviceBuffer workspace;
  const void *A = nullptr, *B = nullptr;
  void* C = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  cublasHandle_t blas = nullptr;  // cuBLAS, where it won the autotuning (plain GEMMs only)
  bool use_blas = false;
  cudaDataType_t type = CUDA_R_32F;
  int M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;

  ~Impl() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
    if (handle) cublasLtDestroy(handle);
    if (blas) cublasDestroy(blas);
  }
  void run_blas(hipStream_t s) {
    BLAS_CHECK(cublasSetStream(blas, s));
    BLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, type, ldb, A, type, lda, &beta, C,
                            type, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  void run(const cublasLtMatmulAlgo_t& al, hipStream_t s) {
    // Column-major view: D[N,M] = Bcm[N,K] . Acm[K,M].
    BLAS_CHECK(cublasLtMatmul(handle, op, &alpha, B, a, A, b, &beta, C, c, C, c, &al, workspace.get(),
                            workspace.bytes(), s));
  }
};

std::string VendorGemm::name() { return "cublasLt"; }

void VendorGemm::check_act(Act act) {
  if (act == Act::kSilu)
    BWPROF_INVALID("act: the vendor library's epilogues cover none, relu and gelu, not silu "
                   "(variants 'tiled', 'tensor' fuse silu; 'unfused' runs it as a separate kernel)");
}

VendorGemm::VendorGemm(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B, void* C,
                       const void* bias, Act act)
    : impl_(std::make_unique<Impl>()) {
  check_act(act);
  Impl& m = *impl_;
  m.A = A, m.B = B, m.C = C;
  const cudaDataType_t t = dtype == DType::kF32 ? CUDA_R_32F : dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  m.type = t;
  m.M = static_cast<int>(s.M), m.N = static_cast<int>(s.N), m.K = static_cast<int>(s.K);
  m.lda = static_cast<int>(s.lda), m.ldb = static_cast<int>(s.ldb), m.ldc = static_cast<int>(s.ldc);
  BLAS_CHECK(cublasLtCreate(&m.handle));
  BLAS_CHECK(cublasLtMatmulDescCreate(&m.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtEpilogue_t epi = epilogue_for(bias != nullptr, act);
  BLAS_CHECK(cublasLtMatmulDescSetAttribute(m.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (bias) {
    BLAS_CHECK(cublasLtMatmulDescSetAttribute(m.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    cudaDataType_t bt = t;
    BLAS_CHECK(cublasLtMatmulDescSetAttribute(m.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
  }
  BLAS_CHECK(cublasLtMatrixLayoutCreate(&m.a, t, s.N, s.K, s.ldb));
  BLAS_CHECK(cublasLtMatrixLayoutCreate(&m.b, t, s.K, s.M, s.lda));
  BLAS_CHECK(cublasLtMatrixLayoutCreate(&m.c, t, s.N, s.M, s.ldc));
  m.workspace = DeviceBuffer(kWorkspaceBytes, "cuBLASLt workspace");
  BLAS_CHECK(cublasLtMatmulPreferenceCreate(&m.pref));
  std::uint64_t ws = kWorkspaceBytes;
  BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(m.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t cand[kCandidates];
  int found = 0;
  BLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(m.handle, m.op, m.a, m.b, m.c, m.c, m.pref, kCandidates, cand, &found));
  if (found == 0)
    throw Error("cublasLtMatmulAlgoGetHeuristic: no algorithm for this GEMM (M=" + std::to_string(s.M) +
                ", N=" + std::to_string(s.N) + ", K=" + std::to_string(s.K) + ")");
  // The heuristic's first choice is not always the fastest for small or odd shapes: time each
  // candidate on these buffers and keep the best, as frameworks' autotuners do; for a plain
  // matrix-vector product, cuBLAS's own choice is one more candidate. Each timed run starts as a bwprof cold run does:
  // the clean L2 flush, then the spin (a write-only flush had left dirty lines whose write-back
  // made small GEMMs' timings, and so the choice, noisy).
  // cuBLAS's GEMM joins the candidates for plain matrix-vector shapes (M or N of 1), which it sends to
  // GEMV kernels that cuBLASLt does not offer (H100, 1x896x896: 6.2-6.3 us against 6.9-7.2 us for
  // cuBLASLt's best). For wider shapes it was tried as well and lost in the measured runs, though
  // it won the autotuning's (32x896x896: 7.2-7.4 us against 6.5), so there cuBLASLt's candidates
  // alone are timed.
  const std::int64_t lim = 2147483647;  // cublasGemmEx takes 32-bit sizes
  const bool plain = bias == nullptr && act == Act::kNone && (s.M == 1 || s.N == 1) && s.M <= lim && s.N <= lim &&
                     s.K <= lim && s.lda <= lim && s.ldb <= lim && s.ldc <= lim;
  if (plain) BLAS_CHECK(cublasCreate(&m.blas));
  m.algo = cand[0].algo;
  if (found > 1 || plain) {
    hipStream_t st = g.stream();
    hipEvent_t e0, e1;
    BWPROF_GPU_CHECK(hipEventCreate(&e0));
    BWPROF_GPU_CHECK(hipEventCreate(&e1));
    // Candidate `found` stands for cuBLAS's GEMM. One run, timed as a cold run is.
    auto launch = [&](int id) {
      if (id == found) m.run_blas(st);
      else m.run(cand[id].algo, st);
    };
    auto time_once = [&](int id) {
      g.flush_l2();
      g.spin_before_timing();
      BWPROF_GPU_CHECK(hipEventRecord(e0, st));
      launch(id);
      BWPROF_GPU_CHECK(hipEventRecord(e1, st));
      BWPROF_GPU_CHECK(hipEventSynchronize(e1));
      float ms = 0;
      BWPROF_GPU_CHECK(hipEventElapsedTime(&ms, e0, e1));
      return ms;
    };
    auto median = [](std::vector<float> t) {
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      return t[t.size() / 2];
    };
    // Round 1: every candidate, 5 runs each. Round 2: the best four, their runs interleaved 15
    // times, so that a drift over the autotuning (clocks, the process's first launches) weighs on
    // all of them alike: with sequential medians alone, 32x896x896 measured 6.5 us in some
    // processes and 7.0-7.4 us in others (H100), the choice differing from run to run.
    std::vector<std::pair<float, int>> first;
    for (int id = 0; id <= found; ++id) {
      if (id == found ? !plain : cand[id].state != CUBLAS_STATUS_SUCCESS) continue;
      launch(id);  // warm-up
      std::vector<float> t;
      for (int r = 0; r < 5; ++r) t.push_back(time_once(id));
      first.emplace_back(median(t), id);
    }
    std::sort(first.begin(), first.end());
    first.resize(std::min<std::size_t>(first.size(), 4));
    std::vector<std::vector<float>> t(first.size());
    for (int r = 0; r < 15; ++r)
      for (std::size_t k = 0; k < first.size(); ++k) t[k].push_back(time_once(first[k].second));
    float best = 1e30f;
    int best_id = first.empty() ? 0 : first[0].second;
    for (std::size_t k = 0; k < first.size(); ++k)
      if (median(t[k]) < best) best = median(t[k]), best_id = first[k].second;
    if (best_id == found) m.use_blas = true;
    else m.algo = cand[best_id].algo;
    (void)hipEventDestroy(e0);
    (void)hipEventDestroy(e1);
  }
}

VendorGemm::~VendorGemm() = default;

void VendorGemm::run(hipStream_t stream) {
  if (impl_->use_blas) impl_->run_blas(stream);
  else impl_->run(impl_->algo, stream);
}

}  // namespace bwprof
#endif  // BWPROF_WITH_VENDOR_BLAS && BWPROF_CUDA
