// The `tensor` GEMM on AMD CDNA matrix units (gfx90a, gfx94x): MFMA 32x32x8, a 64x64 tile per
// block of four 64-wide waves, plain loads; FP16 or BF16 operands (the bf16_1k form), FP32 accumulation.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_HIP)
#include <string>
#include <type_traits>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

constexpr int kMfmaTile = 64, kMfmaK = 16, kMfmaThreads = 256;
typedef float bw_float16 __attribute__((ext_vector_type(16)));

template <class T, int A>
__global__ void __launch_bounds__(kMfmaThreads)
    bwprof_gemm_mfma(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                     T* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
  using E = typename MatrixElem<T>::type;
  typedef E vec_t __attribute__((ext_vector_type(4)));
#if defined(__gfx90a__) || defined(__gfx908__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
  __shared__ E As[kMfmaTile][kMfmaK + 4];
  __shared__ E Bs[kMfmaK][kMfmaTile + 4];
  const int wave = threadIdx.x / 64, lane = threadIdx.x % 64;
  const int wm = wave / 2, wn = wave % 2;  // each wave owns a 32x32 quarter of the tile
  const int m0 = blockIdx.y * kMfmaTile, n0 = blockIdx.x * kMfmaTile;
  bw_float16 acc;
#pragma unroll
  for (int i = 0; i < 16; ++i) acc[i] = 0.f;
  for (int k0 = 0; k0 < K; k0 += kMfmaK) {
    for (int i = threadIdx.x; i < kMfmaTile * kMfmaK; i += kMfmaThreads) {
      const int r = i / kMfmaK, c = i % kMfmaK;
      const int gm = m0 + r, gk = k0 + c;
      As[r][c] = (gm < M && gk < K) ? MatrixElem<T>::from(Am[static_cast<std::size_t>(gm) * lda + gk])
                                    : E(0);
      const int br = i / kMfmaTile, bc = i % kMfmaTile;
      const int bk = k0 + br, bn = n0 + bc;
      Bs[br][bc] = (bk < K && bn < N) ? MatrixElem<T>::from(Bm[static_cast<std::size_t>(bk) * ldb + bn])
                                      : E(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kMfmaK; kk += 8) {
      // A[i][k]: lane = i + 32 * (k / 4), item k % 4; B[k][j]: lane = j + 32 * (k / 4), item k % 4.
      vec_t a, b;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        a[e] = As[wm * 32 + lane % 32][kk + 4 * (lane / 32) + e];
        b[e] = Bs[kk + 4 * (lane / 32) + e][wn * 32 + lane % 32];
      }
      if constexpr (std::is_same<T, bf16>::value) {
#if !defined(__gfx908__)  // gfx908 has no bf16_1k form: dispatch.hip sends its BF16 to the tiled kernel
        acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, acc, 0, 0, 0);
#endif
      } else {
        acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
      }
    }
    __syncthreads();
  }
  // D[i][j]: lane = j + 32 * ((i / 4) % 2), item = i % 4 + 4 * (i / 8).
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    const int row = 8 * (e / 4) + 4 * (lane / 32) + (e % 4);
    const int gm = m0 + wm * 32 + row, gn = n0 + wn * 32 + lane % 32;
    if (gm < M && gn < N) {
      const float v = acc[e] + (bias ? to_f(bias[gn]) : 0.f);
      C[static_cast<std::size_t>(gm) * ldc + gn] = from_f<T>(act<A>(v));
    }
  }
#endif
}

class MfmaRunner final : public GemmRunner {
 public:
  MfmaRunner(DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : bf16_(dt == DType::kBF16), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    gemm::check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    const int tile = kMfmaTile;
    const dim3 grid(static_cast<unsigned>((s_.N + tile - 1) / tile), static_cast<unsigned>((s_.M + tile - 1) / tile));
    if (bf16_) go<bf16>(grid, st); else go<__half>(grid, st);
    BWPROF_CHECK_LAUNCH("bwprof_gemm_mfma");
  }
  Resources resources() const override {
    return gemm::with_act(act_, [&](auto a) {
      return bf16_ ? kernel_resources(bwprof_gemm_mfma<bf16, decltype(a)::value>, kMfmaThreads)
                   : kernel_resources(bwprof_gemm_mfma<__half, decltype(a)::value>, kMfmaThreads);
    });
  }

 private:
  template <class T>
  void go(dim3 grid, hipStream_t st) {
    gemm::with_act(act_, [&](auto a) {
      bwprof_gemm_mfma<T, decltype(a)::value><<<grid, kMfmaThreads, 0, st>>>(
          static_cast<const T*>(A_), static_cast<const T*>(B_), static_cast<const T*>(bias_), static_cast<T*>(C_),
          int(s_.M), int(s_.N), int(s_.K), int(s_.lda), int(s_.ldb), int(s_.ldc));
      return 0;
    });
  }
  bool bf16_;
  Shape s_;
  const void* A_;
  const void* B_;
  void* C_;
  const void* bias_;
  Act act_;
};

}  // namespace

bool gemm::has_mfma(const std::string& arch) {
  return arch == "gfx90a" || arch == "gfx908" || arch == "gfx940" || arch == "gfx941" || arch == "gfx942";
}

std::unique_ptr<GemmRunner> gemm::make_mfma_cdna(DType dtype, Shape s, const void* A, const void* B, void* C,
                                                 const void* bias, Act act) {
  return std::make_unique<MfmaRunner>(dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_HIP
