// The `tensor` GEMM on AMD RDNA3 (gfx11, wave32): WMMA 16x16x16, a 64x64 tile per block of four
// waves; FP16 or BF16 operands, FP32 accumulation. `make hip-wmma-check` compiles this file for gfx1100
// and looks for the WMMA instruction in its assembly.
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

// Fragments (wave32; lanes 16-31 repeat lanes 0-15's A and B): A: lane -> row lane % 16, its 16
// K values; B: lane -> column lane % 16, its 16 K values; D: item i -> row 2i + lane / 16,
// column lane % 16.
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__)
#if !defined(__AMDGCN_WAVEFRONT_SIZE) || __AMDGCN_WAVEFRONT_SIZE == 32
#define BWPROF_WMMA_DEVICE 1
#endif
#endif
constexpr int kWmmaTile = 64, kWmmaK = 16, kWmmaThreads = 128;
typedef float bw_float8 __attribute__((ext_vector_type(8)));

template <class T, int A>
__global__ void __launch_bounds__(kWmmaThreads)
    bwprof_gemm_wmma(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                     T* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
  using E = typename MatrixElem<T>::type;
  typedef E vec_t __attribute__((ext_vector_type(16)));
#if defined(BWPROF_WMMA_DEVICE)
  __shared__ E As[kWmmaTile][kWmmaK + 8];
  __shared__ E Bs[kWmmaK][kWmmaTile + 8];
  const int wave = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = wave / 2, wn = wave % 2;  // each wave owns a 32x32 quarter: 2 x 2 WMMA tiles
  const int m0 = blockIdx.y * kWmmaTile, n0 = blockIdx.x * kWmmaTile;
  bw_float8 acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[i][j][e] = 0.f;
  for (int k0 = 0; k0 < K; k0 += kWmmaK) {
    for (int i = threadIdx.x; i < kWmmaTile * kWmmaK; i += kWmmaThreads) {
      const int r = i / kWmmaK, c = i % kWmmaK;
      const int gm = m0 + r, gk = k0 + c;
      As[r][c] = (gm < M && gk < K) ? MatrixElem<T>::from(Am[static_cast<std::size_t>(gm) * lda + gk])
                                    : E(0);
      const int br = i / kWmmaTile, bc = i % kWmmaTile;
      const int bk = k0 + br, bn = n0 + bc;
      Bs[br][bc] = (bk < K && bn < N) ? MatrixElem<T>::from(Bm[static_cast<std::size_t>(bk) * ldb + bn])
                                      : E(0);
    }
    __syncthreads();
    vec_t a[2], b[2];
#pragma unroll
    for (int t = 0; t < 2; ++t)
#pragma unroll
      for (int e = 0; e < 16; ++e) {
        a[t][e] = As[wm * 32 + t * 16 + lane % 16][e];
        b[t][e] = Bs[e][wn * 32 + t * 16 + lane % 16];
      }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if constexpr (std::is_same<T, bf16>::value)
          acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a[i], b[j], acc[i][j]);
        else
          acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], b[j], acc[i][j]);
      }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int gm = m0 + wm * 32 + i * 16 + 2 * e + lane / 16, gn = n0 + wn * 32 + j * 16 + lane % 16;
        if (gm < M && gn < N) {
          const float v = acc[i][j][e] + (bias ? to_f(bias[gn]) : 0.f);
          C[static_cast<std::size_t>(gm) * ldc + gn] = from_f<T>(act<A>(v));
        }
      }
#endif
}

class WmmaRunner final : public GemmRunner {
 public:
  WmmaRunner(DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : bf16_(dt == DType::kBF16), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    gemm::check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    const int tile = kWmmaTile;
    const dim3 grid(static_cast<unsigned>((s_.N + tile - 1) / tile), static_cast<unsigned>((s_.M + tile - 1) / tile));
    if (bf16_) go<bf16>(grid, st); else go<__half>(grid, st);
    BWPROF_CHECK_LAUNCH("bwprof_gemm_wmma");
  }
  Resources resources() const override {
    return gemm::with_act(act_, [&](auto a) {
      return bf16_ ? kernel_resources(bwprof_gemm_wmma<bf16, decltype(a)::value>, kWmmaThreads)
                   : kernel_resources(bwprof_gemm_wmma<__half, decltype(a)::value>, kWmmaThreads);
    });
  }

 private:
  template <class T>
  void go(dim3 grid, hipStream_t st) {
    gemm::with_act(act_, [&](auto a) {
      bwprof_gemm_wmma<T, decltype(a)::value><<<grid, kWmmaThreads, 0, st>>>(
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

// RDNA3 (gfx11): WMMA in wave32, the mode HIP compiles gfx11 for by default.
bool gemm::has_wmma(const std::string& arch, int warp_size) { return arch.rfind("gfx11", 0) == 0 && warp_size == 32; }

std::unique_ptr<GemmRunner> gemm::make_wmma_rdna3(DType dtype, Shape s, const void* A, const void* B, void* C,
                                                  const void* bias, Act act) {
  return std::make_unique<WmmaRunner>(dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_HIP
