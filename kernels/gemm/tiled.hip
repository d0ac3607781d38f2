// GEMM on the vector units, every GPU: 64x64 tiles of C, 16 deep, 256 threads each computing 4x4
// outputs from shared memory, FP32, FP16 or BF16 storage, any M, N, K. The `tiled` variant, and the
// `tensor` variant's fallback where a GPU has no matrix units (RDNA2).
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

constexpr int kTile = 64, kTileK = 16, kTiledThreads = 256;

template <class T, int A>
__global__ void __launch_bounds__(kTiledThreads)
    bwprof_gemm_tiled(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                      T* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
  // A is kept transposed ([k][m]) so that both operands are read along the output's rows/columns.
  __shared__ float As[kTileK][kTile + 4];
  __shared__ float Bs[kTileK][kTile + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += kTiledThreads) {
      const int r = i / kTileK, c = i % kTileK;  // A: consecutive threads along k
      const int gm = m0 + r, gk = k0 + c;
      As[c][r] = (gm < M && gk < K) ? to_f(Am[static_cast<std::size_t>(gm) * lda + gk]) : 0.f;
      const int br = i / kTile, bc = i % kTile;  // B: consecutive threads along n
      const int bk = k0 + br, bn = n0 + bc;
      Bs[br][bc] = (bk < K && bn < N) ? to_f(Bm[static_cast<std::size_t>(bk) * ldb + bn]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTileK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i], b[i] = Bs[k][tx + 16 * i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int gm = m0 + ty + 16 * i;
    if (gm >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gn = n0 + tx + 16 * j;
      if (gn >= N) continue;
      float v = acc[i][j] + (bias ? to_f(bias[gn]) : 0.f);
      C[static_cast<std::size_t>(gm) * ldc + gn] = from_f<T>(act<A>(v));
    }
  }
}

class TiledRunner final : public GemmRunner {
 public:
  TiledRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : dt_(dt), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    gemm::check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    by_dtype(dt_, [&](auto t) { go<typename decltype(t)::type>(st); });
  }
  Resources resources() const override {
    return gemm::with_act(act_, [&](auto a) {
      return by_dtype(dt_, [&](auto t) {
        return kernel_resources(bwprof_gemm_tiled<typename decltype(t)::type, decltype(a)::value>, kTiledThreads);
      });
    });
  }

 private:
  template <class T>
  void go(hipStream_t st) {
    const dim3 grid(static_cast<unsigned>((s_.N + kTile - 1) / kTile), static_cast<unsigned>((s_.M + kTile - 1) / kTile));
    gemm::with_act(act_, [&](auto a) {
      bwprof_gemm_tiled<T, decltype(a)::value><<<grid, kTiledThreads, 0, st>>>(
          static_cast<const T*>(A_), static_cast<const T*>(B_), static_cast<const T*>(bias_), static_cast<T*>(C_),
          int(s_.M), int(s_.N), int(s_.K), int(s_.lda), int(s_.ldb), int(s_.ldc));
      return 0;
    });
    BWPROF_CHECK_LAUNCH("bwprof_gemm_tiled");
  }
  DType dt_;
  Shape s_;
  const void *A_, *B_;
  void* C_;
  const void* bias_;
  Act act_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_tiled(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                             void* C, const void* bias, Act act) {
  return std::make_unique<TiledRunner>(g, dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
