// The `tensor` GEMM on NVIDIA matrix units (sm_80+): mma.sync m16n8k16, a cp.async multi-stage
// pipeline and ldmatrix; FP16 operands, FP32 accumulation. Hopper builds with sm_90a code take
// wgmma_sm90.hip instead where its operands allow (dispatch.hip).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cstdlib>
#include <cstring>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

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

// Tile shapes: large (128x256, 8 warps of 64x64), medium (128x128, 8 warps of 64x32), small (64x64,
// 4 warps of 32x32); medium where its grid fills the GPU, else small.
enum class MmaTile { kLarge, kMedium, kSmall };

class MmaRunner final : public GemmRunner {
 public:
  MmaRunner(GpuBackend& g, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : s_(s), A_(static_cast<const __half*>(A)), B_(static_cast<const __half*>(B)), C_(static_cast<__half*>(C)),
        bias_(static_cast<const __half*>(bias)), act_(act) {
    gemm::check_int_sizes(s);
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
    return gemm::with_act(act_, [&](auto a) {
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

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_mma_sm80(GpuBackend& g, Shape s, const void* A, const void* B, void* C,
                                                const void* bias, Act act) {
  return std::make_unique<MmaRunner>(g, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
