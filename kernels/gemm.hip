// GEMM C = act(A.B + bias) on the GPU, A[M,K] and B[K,N] row-major, FP32 accumulation. Variants:
//   tiled   shared-memory tiles on the vector units, FP32 or FP16, any M, N, K
//   tensor  FP16 on the matrix units: mma.sync m16n8k16 on NVIDIA (sm_80+), MFMA 32x32x8 on AMD
//           CDNA (gfx90a, gfx94x); GPUs without matrix units (RDNA2) run the tiled kernel
//   vendor  the vendor library (cuBLASLt), its epilogue applying the bias and activation
//   unfused the vendor (else bwprof's) GEMM, then bwprof's bias + activation kernel: the two-pass
//           form that the fused epilogues are compared with
// and the QKV projection: one GEMM over concatenated weights beside three separate GEMMs.
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "bwprof/error.hpp"
#include "cpu/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/vendor_blas.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"
#include "gpu_launch.hpp"
#include "gpu_mma.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// ---- tiled: 64x64 tiles, 16 deep, 256 threads each computing 4x4 outputs ----------------------
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

// ---- tensor (NVIDIA): mma.sync m16n8k16, cp.async multi-stage pipeline, ldmatrix ------------
#if defined(BWPROF_CUDA)
// BK: K per pipeline stage (64 halves the barriers per multiply-add against 32).
template <int BM, int BN, int WM, int WN, int STAGES, int BK>
struct MmaConfig {
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kAStride = BK + 8;  // halves; +16 bytes keeps ldmatrix's 8 rows in 8 bank groups
  static constexpr int kBStride = BN + 8;
  static constexpr int kSmemBytes = STAGES * (BM * kAStride + BK * kBStride) * 2;
};

// ALIGNED: K, N and the leading dimensions are multiples of 8, so every 16-byte piece of a row is
// wholly inside or outside the matrix and cp.async can move it; otherwise plain loads.
template <int BM, int BN, int WM, int WN, int STAGES, int kMmaK, bool ALIGNED, int A>
__global__ void __launch_bounds__(MmaConfig<BM, BN, WM, WN, STAGES, kMmaK>::kThreads)
    bwprof_gemm_mma(const __half* __restrict__ Am, const __half* __restrict__ Bm, const __half* __restrict__ bias,
                    __half* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
  using Cfg = MmaConfig<BM, BN, WM, WN, STAGES, kMmaK>;
  constexpr int AS = Cfg::kAStride, BS = Cfg::kBStride, THREADS = Cfg::kThreads;
  constexpr int MT = WM / 16, NT = WN / 8;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* As = reinterpret_cast<__half*>(smem_raw);
  __half* Bs = As + STAGES * BM * AS;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int ktiles = (K + kMmaK - 1) / kMmaK;
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  auto load = [&](int stage, int kt) {
    const int k0 = kt * kMmaK;
    __half* as = As + stage * BM * AS;
    __half* bs = Bs + stage * kMmaK * BS;
#pragma unroll
    for (int c = tid; c < BM * kMmaK / 8; c += THREADS) {
      const int r = c / (kMmaK / 8), kc = (c % (kMmaK / 8)) * 8;
      const int gm = m0 + r, gk = k0 + kc;
      if (ALIGNED) {
        const bool in = gm < M && gk < K;
        cp_async16(as + r * AS + kc, in ? Am + static_cast<std::size_t>(gm) * lda + gk : Am, in);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e)
          as[r * AS + kc + e] = (gm < M && gk + e < K) ? Am[static_cast<std::size_t>(gm) * lda + gk + e]
                                                       : __float2half(0.f);
      }
    }
#pragma unroll
    for (int c = tid; c < kMmaK * BN / 8; c += THREADS) {
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int gk = k0 + r, gn = n0 + nc;
      if (ALIGNED) {
        const bool in = gk < K && gn < N;
        cp_async16(bs + r * BS + nc, in ? Bm + static_cast<std::size_t>(gk) * ldb + gn : Bm, in);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e)
          bs[r * BS + nc + e] = (gk < K && gn + e < N) ? Bm[static_cast<std::size_t>(gk) * ldb + gn + e]
                                                       : __float2half(0.f);
      }
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt is in shared memory, and every warp is done with tile kt - 1
    {
      const int next = kt + STAGES - 1;
      if (next < ktiles) load(next % STAGES, next);
      cp_async_commit();
    }
    const __half* as = As + (kt % STAGES) * BM * AS;
    const __half* bs = Bs + (kt % STAGES) * kMmaK * BS;
#pragma unroll
    for (int kk = 0; kk < kMmaK; kk += 16) {
      unsigned a[MT][4], b[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i)
        ldmatrix_x4(a[i], as + (wm * WM + i * 16 + (lane % 16)) * AS + kk + (lane / 16) * 8);
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) {
        unsigned r[4];
        ldmatrix_x4_trans(r, bs + (kk + (lane % 8) + ((lane / 8) % 2) * 8) * BS + wn * WN + j * 16 + (lane / 16) * 8);
        b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_16816(acc[i][j], a[i], b[j]);
    }
  }
  cp_async_wait<0>();

  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < MT; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int gm = m0 + wm * WM + i * 16 + g + 8 * h;
      if (gm >= M) continue;
      __half* crow = C + static_cast<std::size_t>(gm) * ldc;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int gn = n0 + wn * WN + j * 8 + 2 * t;
        float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (ALIGNED && gn + 1 < N) {
          if (bias) {
            const float2 bb = __half22float2(*reinterpret_cast<const __half2*>(bias + gn));
            v0 += bb.x, v1 += bb.y;
          }
          *reinterpret_cast<__half2*>(crow + gn) = __floats2half2_rn(act<A>(v0), act<A>(v1));
        } else {
          if (gn < N) crow[gn] = __float2half_rn(act<A>(v0 + (bias ? __half2float(bias[gn]) : 0.f)));
          if (gn + 1 < N) crow[gn + 1] = __float2half_rn(act<A>(v1 + (bias ? __half2float(bias[gn + 1]) : 0.f)));
        }
      }
    }
  }
}
#endif  // BWPROF_CUDA

// ---- tensor (AMD CDNA): MFMA 32x32x8, a 64x64 tile per block of four 64-wide waves -----------
#if defined(BWPROF_HIP)
constexpr int kMfmaTile = 64, kMfmaK = 16, kMfmaThreads = 256;
typedef _Float16 bw_half4 __attribute__((ext_vector_type(4)));
typedef float bw_float16 __attribute__((ext_vector_type(16)));

template <int A>
__global__ void __launch_bounds__(kMfmaThreads)
    bwprof_gemm_mfma(const __half* __restrict__ Am, const __half* __restrict__ Bm, const __half* __restrict__ bias,
                     __half* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
#if defined(__gfx90a__) || defined(__gfx908__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
  __shared__ _Float16 As[kMfmaTile][kMfmaK + 4];
  __shared__ _Float16 Bs[kMfmaK][kMfmaTile + 4];
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
      As[r][c] = (gm < M && gk < K) ? static_cast<_Float16>(__half2float(Am[static_cast<std::size_t>(gm) * lda + gk]))
                                    : static_cast<_Float16>(0.f);
      const int br = i / kMfmaTile, bc = i % kMfmaTile;
      const int bk = k0 + br, bn = n0 + bc;
      Bs[br][bc] = (bk < K && bn < N) ? static_cast<_Float16>(__half2float(Bm[static_cast<std::size_t>(bk) * ldb + bn]))
                                      : static_cast<_Float16>(0.f);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kMfmaK; kk += 8) {
      // A[i][k]: lane = i + 32 * (k / 4), item k % 4; B[k][j]: lane = j + 32 * (k / 4), item k % 4.
      bw_half4 a, b;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        a[e] = As[wm * 32 + lane % 32][kk + 4 * (lane / 32) + e];
        b[e] = Bs[kk + 4 * (lane / 32) + e][wn * 32 + lane % 32];
      }
      acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
    }
    __syncthreads();
  }
  // D[i][j]: lane = j + 32 * ((i / 4) % 2), item = i % 4 + 4 * (i / 8).
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    const int row = 8 * (e / 4) + 4 * (lane / 32) + (e % 4);
    const int gm = m0 + wm * 32 + row, gn = n0 + wn * 32 + lane % 32;
    if (gm < M && gn < N) {
      const float v = acc[e] + (bias ? __half2float(bias[gn]) : 0.f);
      C[static_cast<std::size_t>(gm) * ldc + gn] = __float2half(act<A>(v));
    }
  }
#endif
}

bool has_mfma(const std::string& arch) {
  return arch == "gfx90a" || arch == "gfx908" || arch == "gfx940" || arch == "gfx941" || arch == "gfx942";
}
#endif  // BWPROF_HIP

// ---- the engines behind one interface ---------------------------------------------------------

int act_index(Act a) {
  switch (a) {
    case Act::kRelu: return kActRelu;
    case Act::kGelu: return kActGelu;
    case Act::kSilu: return kActSilu;
    default: return kActNone;
  }
}

// Calls f(std::integral_constant<int, A>) for the activation's compile-time index.
template <class F>
auto with_act(Act a, F&& f) {
  switch (act_index(a)) {
    case kActRelu: return f(std::integral_constant<int, kActRelu>());
    case kActGelu: return f(std::integral_constant<int, kActGelu>());
    case kActSilu: return f(std::integral_constant<int, kActSilu>());
    default: return f(std::integral_constant<int, kActNone>());
  }
}

void check_int_sizes(const GemmRunner::Shape& s) {
  const std::int64_t lim = 2147483647;
  if (s.M > lim || s.N > lim || s.K > lim || s.lda > lim || s.ldb > lim || s.ldc > lim)
    BWPROF_INVALID("M/N/K: at most 2^31-1 on the GPU");
}

class TiledRunner final : public GemmRunner {
 public:
  TiledRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : dt_(dt), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    if (dt_ == DType::kF32) go<float>(st); else go<__half>(st);
  }
  Resources resources() const override {
    return with_act(act_, [&](auto a) {
      return dt_ == DType::kF32 ? kernel_resources(bwprof_gemm_tiled<float, decltype(a)::value>, kTiledThreads)
                                : kernel_resources(bwprof_gemm_tiled<__half, decltype(a)::value>, kTiledThreads);
    });
  }

 private:
  template <class T>
  void go(hipStream_t st) {
    const dim3 grid(static_cast<unsigned>((s_.N + kTile - 1) / kTile), static_cast<unsigned>((s_.M + kTile - 1) / kTile));
    with_act(act_, [&](auto a) {
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

#if defined(BWPROF_CUDA)
// Tile shapes: large (128x256, 8 warps of 64x64), medium (128x128, 8 warps of 64x32), small (64x64,
// 4 warps of 32x32); medium where its grid fills the GPU, else small.
enum class MmaTile { kLarge, kMedium, kSmall };

class MmaRunner final : public GemmRunner {
 public:
  MmaRunner(GpuBackend& g, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : s_(s), A_(static_cast<const __half*>(A)), B_(static_cast<const __half*>(B)), C_(static_cast<__half*>(C)),
        bias_(static_cast<const __half*>(bias)), act_(act) {
    check_int_sizes(s);
    aligned_ = s.K % 8 == 0 && s.N % 8 == 0 && s.lda % 8 == 0 && s.ldb % 8 == 0 && s.ldc % 2 == 0;
    const std::int64_t sms = g.sm_count();
    auto tiles = [&](int bm, int bn) { return ((s.M + bm - 1) / bm) * ((s.N + bn - 1) / bn); };
    // Measured on an H100 at 4096^3: 128x128 ahead of 128x256 (one block an SM) and 64x64.
    tile_ = tiles(128, 128) >= sms ? MmaTile::kMedium : MmaTile::kSmall;
    // A tuning knob for benchmarks: BWPROF_GEMM_TILE=large|medium|small overrides the choice.
    if (const char* e = std::getenv("BWPROF_GEMM_TILE")) {
      if (!std::strcmp(e, "large")) tile_ = MmaTile::kLarge;
      if (!std::strcmp(e, "medium")) tile_ = MmaTile::kMedium;
      if (!std::strcmp(e, "small")) tile_ = MmaTile::kSmall;
    }
    res_ = dispatch(nullptr, false);  // raises the shared-memory limit once, outside any timing
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(hipStream_t st, bool launch) {
    switch (tile_) {
      case MmaTile::kLarge: return by_align<128, 256, 64, 64, 3, 64>(st, launch);
      case MmaTile::kMedium: return by_align<128, 128, 64, 32, 3, 64>(st, launch);
      default: return by_align<64, 64, 32, 32, 3, 64>(st, launch);
    }
  }
  template <int BM, int BN, int WM, int WN, int ST, int BK>
  Resources by_align(hipStream_t st, bool launch) {
    return aligned_ ? go<BM, BN, WM, WN, ST, BK, true>(st, launch) : go<BM, BN, WM, WN, ST, BK, false>(st, launch);
  }
  template <int BM, int BN, int WM, int WN, int ST, int BK, bool AL>
  Resources go(hipStream_t st, bool launch) {
    using Cfg = MmaConfig<BM, BN, WM, WN, ST, BK>;
    return with_act(act_, [&](auto a) {
      auto* fn = &bwprof_gemm_mma<BM, BN, WM, WN, ST, BK, AL, decltype(a)::value>;
      if (!launch) {
        BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                             hipFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
        return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
      }
      const dim3 grid(static_cast<unsigned>((s_.N + BN - 1) / BN), static_cast<unsigned>((s_.M + BM - 1) / BM));
      fn<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(A_, B_, bias_, C_, int(s_.M), int(s_.N), int(s_.K),
                                                       int(s_.lda), int(s_.ldb), int(s_.ldc));
      BWPROF_CHECK_LAUNCH("bwprof_gemm_mma");
      return Resources{};
    });
  }
  Shape s_;
  const __half* A_;
  const __half* B_;
  __half* C_;
  const __half* bias_;
  Act act_;
  bool aligned_ = false;
  MmaTile tile_ = MmaTile::kSmall;
  Resources res_;
};
#endif

#if defined(BWPROF_HIP)
class MfmaRunner final : public GemmRunner {
 public:
  MfmaRunner(Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : s_(s), A_(static_cast<const __half*>(A)), B_(static_cast<const __half*>(B)), C_(static_cast<__half*>(C)),
        bias_(static_cast<const __half*>(bias)), act_(act) {
    check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    const dim3 grid(static_cast<unsigned>((s_.N + kMfmaTile - 1) / kMfmaTile),
                    static_cast<unsigned>((s_.M + kMfmaTile - 1) / kMfmaTile));
    with_act(act_, [&](auto a) {
      bwprof_gemm_mfma<decltype(a)::value><<<grid, kMfmaThreads, 0, st>>>(A_, B_, bias_, C_, int(s_.M), int(s_.N),
                                                                         int(s_.K), int(s_.lda), int(s_.ldb), int(s_.ldc));
      return 0;
    });
    BWPROF_CHECK_LAUNCH("bwprof_gemm_mfma");
  }
  Resources resources() const override {
    return with_act(act_, [&](auto a) { return kernel_resources(bwprof_gemm_mfma<decltype(a)::value>, kMfmaThreads); });
  }

 private:
  Shape s_;
  const __half* A_;
  const __half* B_;
  __half* C_;
  const __half* bias_;
  Act act_;
};
#endif

#ifdef BWPROF_WITH_VENDOR_BLAS
class VendorRunner final : public GemmRunner {
 public:
  VendorRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : lt_(g, dt, VendorGemm::Shape{s.M, s.N, s.K, s.lda, s.ldb, s.ldc}, A, B, C, bias, act) {}
  void run(hipStream_t st) override { lt_.run(st); }
  Resources resources() const override { return {}; }  // the library's kernels are not ours to query

 private:
  VendorGemm lt_;
};
#endif

// Whether this device runs the `tensor` engine on its matrix units, and why not otherwise.
std::string tensor_unavailable(GpuBackend& g) {
#if defined(BWPROF_CUDA)
  const std::string& arch = g.info().arch;  // "sm_90"
  const int cc = std::atoi(arch.c_str() + 3);
  if (cc < 80) return "the tensor variant needs sm_80 or newer (this device: " + arch + ")";
#endif
  return "";
}

// ---- the gemm family's GPU instance ----------------------------------------------------------

class GemmGpu final : public KernelInstance {
 public:
  GemmGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_gemm_data(p)) {
    act_ = parse_act(p.s("act"));
    const std::int64_t M = p.i("M"), N = p.i("N"), K = p.i("K");
    const GemmRunner::Shape s{M, N, K, K, N, N};
    A_ = DeviceBuffer::from(host_.A, "GEMM A");
    B_ = DeviceBuffer::from(host_.B, "GEMM B");
    C_ = DeviceBuffer::from(host_.C, "GEMM C");
    if (p.b("bias")) bias_ = DeviceBuffer::from(host_.bias, "GEMM bias");
    const void* bias = p.b("bias") ? bias_.get() : nullptr;
    const std::string& v = p.variant;
    if (v == "tiled") {
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kTiled, s, A_.get(), B_.get(), C_.get(), bias, act_);
    } else if (v == "tensor") {
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kTensor, s, A_.get(), B_.get(), C_.get(), bias, act_);
    } else if (v == "vendor") {
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kVendor, s, A_.get(), B_.get(), C_.get(), bias, act_);
    } else {  // unfused: the plain GEMM, then the bias + activation kernel over C in place
      unfused_ = p.b("bias") || act_ != Act::kNone;
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::best(g, p.dtype), s, A_.get(), B_.get(), C_.get(), nullptr,
                               Act::kNone);
    }
  }
  void launch() override {
    gemm_->run(g_.stream());
    if (unfused_)
      launch_bias_act(p_.dtype, C_.get(), p_.b("bias") ? bias_.get() : nullptr, C_.get(), host_.C.size(),
                      static_cast<int>(p_.i("N")), act_, g_.sm_count(), g_.stream());
  }
  Check check() override {
    g_.synchronize();
    C_.to(host_.C);
    // cuBLASLt's GELU epilogue is the tanh form, up to 5e-4 away from the erf form the reference
    // uses: an FP32 output is held to that, not to FP32 rounding.
    const bool tanh_gelu = p_.variant == "vendor" && act_ == Act::kGelu;
    return gemm_check(host_, p_, tanh_gelu ? 1e-3 : 1e-4);
  }
  Resources resources() const override {
    // The vendor library's kernels are not ours to query: an unfused row then reports its own pass.
    Resources r = gemm_->resources();
    if (r.block_size <= 0 && unfused_) r = bias_act_resources(p_.dtype, act_);
    return r;
  }

 private:
  GpuBackend& g_;
  Problem p_;
  GemmData host_;
  Act act_;
  bool unfused_ = false;
  DeviceBuffer A_, B_, C_, bias_;
  std::unique_ptr<GemmRunner> gemm_;
};

// ---- QKV projection: one GEMM over [Wq | Wk | Wv] beside three GEMMs ----------------------------

class QkvGpu final : public KernelInstance {
 public:
  QkvGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_qkv_data(p)) {
    const std::int64_t T = p.i("tokens"), H = p.i("hidden"), O = 3 * H;
    X_ = DeviceBuffer::from(host_.X, "QKV X");
    Y_ = DeviceBuffer::from(host_.Y, "QKV Y");
    const GemmRunner::Engine e = GemmRunner::best(g, p.dtype);
    const std::size_t es = dtype_size(p.dtype);
    if (p.variant == "fused") {
      W_ = DeviceBuffer::from(host_.W, "QKV W");
      gemms_.push_back(GemmRunner::make(g, p.dtype, e, {T, O, H, H, O, O}, X_.get(), W_.get(), Y_.get(), nullptr,
                                        Act::kNone));
    } else {
      // Three weights of their own, [H, H] each, as a model that keeps them apart stores them; three
      // outputs [T, H]. check() gathers the outputs into Y's concatenated layout.
      for (int w = 0; w < 3; ++w) {
        HostTensor part(p.dtype, static_cast<std::size_t>(H * H), "QKV weight part");
        for (std::int64_t k = 0; k < H; ++k)
          std::memcpy(static_cast<char*>(part.data()) + k * H * es,
                      static_cast<const char*>(host_.W.data()) + (k * O + w * H) * es, H * es);
        parts_W_[w] = DeviceBuffer::from(part, "QKV weight part");
        parts_Y_[w] = DeviceBuffer(static_cast<std::size_t>(T * H) * es, "QKV output part");
        gemms_.push_back(GemmRunner::make(g, p.dtype, e, {T, H, H, H, H, H}, X_.get(), parts_W_[w].get(),
                                          parts_Y_[w].get(), nullptr, Act::kNone));
      }
    }
  }
  void launch() override {
    for (auto& gm : gemms_) gm->run(g_.stream());
  }
  Check check() override {
    g_.synchronize();
    if (p_.variant == "fused") {
      Y_.to(host_.Y);
    } else {
      const std::int64_t T = p_.i("tokens"), H = p_.i("hidden");
      const std::size_t es = dtype_size(p_.dtype);
      HostTensor part(p_.dtype, static_cast<std::size_t>(T * H), "QKV output part");
      for (int w = 0; w < 3; ++w) {
        parts_Y_[w].to(part);
        for (std::int64_t t = 0; t < T; ++t)
          std::memcpy(static_cast<char*>(host_.Y.data()) + (t * 3 * H + w * H) * es,
                      static_cast<const char*>(part.data()) + t * H * es, H * es);
      }
    }
    return qkv_check(host_, p_);
  }
  Resources resources() const override { return gemms_.front()->resources(); }

 private:
  GpuBackend& g_;
  Problem p_;
  QkvData host_;
  DeviceBuffer X_, W_, Y_, parts_W_[3], parts_Y_[3];
  std::vector<std::unique_ptr<GemmRunner>> gemms_;
};

}  // namespace

GemmRunner::Engine GemmRunner::best(GpuBackend& g, DType dtype) {
#ifdef BWPROF_WITH_VENDOR_BLAS
  return Engine::kVendor;
#else
  if (dtype == DType::kF16 && tensor_unavailable(g).empty()) return Engine::kTensor;
  return Engine::kTiled;
#endif
}

std::unique_ptr<GemmRunner> GemmRunner::make(GpuBackend& g, DType dtype, Engine e, Shape s, const void* A,
                                             const void* B, void* C, const void* bias, Act act) {
  switch (e) {
    case Engine::kTiled:
      return std::make_unique<TiledRunner>(g, dtype, s, A, B, C, bias, act);
    case Engine::kTensor: {
      if (dtype != DType::kF16) BWPROF_INVALID("dtype: the tensor variant is FP16 only (use tiled or vendor for fp32)");
      const std::string why = tensor_unavailable(g);
      if (!why.empty()) BWPROF_INVALID("variant: " + why + "; available here: tiled, unfused" +
#ifdef BWPROF_WITH_VENDOR_BLAS
                                       std::string(", vendor")
#else
                                       std::string()
#endif
      );
#if defined(BWPROF_CUDA)
      return std::make_unique<MmaRunner>(g, s, A, B, C, bias, act);
#else
      if (has_mfma(g.info().arch)) return std::make_unique<MfmaRunner>(s, A, B, C, bias, act);
      return std::make_unique<TiledRunner>(g, dtype, s, A, B, C, bias, act);  // no matrix units (RDNA2)
#endif
    }
    case Engine::kVendor:
#ifdef BWPROF_WITH_VENDOR_BLAS
      return std::make_unique<VendorRunner>(g, dtype, s, A, B, C, bias, act);
#else
      BWPROF_INVALID("variant: this build has no vendor BLAS (available: tiled, tensor, unfused)");
#endif
  }
  BWPROF_INVALID("variant: unknown GEMM engine");
}

std::unique_ptr<KernelInstance> make_gemm_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemmGpu>(as_gpu(b), p);
}

std::unique_ptr<KernelInstance> make_qkv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<QkvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
