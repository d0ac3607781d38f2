// GEMM C = act(A.B + bias) on the GPU, A[M,K] and B[K,N] row-major, FP32 accumulation. Variants:
//   tiled   shared-memory tiles on the vector units, FP32 or FP16, any M, N, K
//   tensor  FP16 on the matrix units: wgmma fed by the bulk tensor copy engine on NVIDIA Hopper
//           (sm_90a builds), mma.sync m16n8k16 on other NVIDIA GPUs (sm_80+) and for shapes wgmma
//           cannot take, MFMA 32x32x8 on AMD CDNA (gfx90a, gfx94x), WMMA 16x16x16 on RDNA3 (gfx11,
//           wave32); GPUs without matrix units (RDNA2) run the tiled kernel
//   vendor  the vendor library (cuBLASLt), its epilogue applying the bias and activation
//   unfused the vendor (else bwprof's) GEMM, then bwprof's bias + activation kernel: the two-pass
//           form that the fused epilogues are compared with
// and the QKV projection: one GEMM over concatenated weights beside three separate GEMMs.
#include <cstdint>
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
#include "gpu_wgmma.hpp"

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

#if defined(BWPROF_CUDA)
// ---- tensor (NVIDIA Hopper, sm_90a): wgmma on tiles that the copy engine brings in ------------
// A block computes a (64*CONS) x BN tile of C, 64 deep per step. Warpgroup 0 is the producer: one
// thread asks the copy engine (TMA) for A[BM x 64] (K-major) and B[64 x BN] (N-major, as boxes of
// 64 x 64) of each step into a STAGES-deep ring of shared memory, 128-byte swizzled, each stage
// completing on its `full` mbarrier. Warpgroups 1..CONS each own 64 rows: they wait on `full`,
// issue four wgmma m64nBNk16 (B transposed by the instruction), keep one step in flight and hand
// the previous step's stage back through its `empty` mbarrier. Edges: the copy engine fills what
// lies outside A and B with zeros; the epilogue (bias, activation, FP16) stores inside C only.
template <int CONS, int BN, int STAGES>
struct WgCfg {
  static constexpr int kBM = 64 * CONS, kBK = 64, kThreads = 128 * (CONS + 1);
  static constexpr int kABytes = kBM * kBK * 2, kBBytes = kBK * BN * 2, kStageBytes = kABytes + kBBytes;
  static constexpr int kSmemBytes = STAGES * kStageBytes + 1024 + 2 * STAGES * 8;  // + alignment, barriers
};

template <int CONS, int BN, int STAGES, int A>
__global__ void __launch_bounds__(WgCfg<CONS, BN, STAGES>::kThreads, 1)
    bwprof_gemm_wgmma(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                      const __half* __restrict__ bias, __half* __restrict__ C, int M, int N, int K, int ldc) {
#if defined(BWPROF_WGMMA_DEVICE)
  using Cfg = WgCfg<CONS, BN, STAGES>;
  extern __shared__ __align__(1024) unsigned char wg_smem[];
  const unsigned base = (smem_u32(wg_smem) + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1 KB
  const unsigned a_s = base, b_s = base + STAGES * Cfg::kABytes;
  const unsigned full = base + STAGES * Cfg::kStageBytes, empty = full + 8 * STAGES;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int m0 = blockIdx.y * Cfg::kBM, n0 = blockIdx.x * BN;
  const int ktiles = (K + Cfg::kBK - 1) / Cfg::kBK;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);
      mbar_init(empty + 8 * s, CONS);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    if constexpr (CONS > 1) regs_shrink<40>();
    if (t == 0) {
      for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + 8 * s, ((kt / STAGES) - 1) & 1);
        mbar_expect_tx(full + 8 * s, Cfg::kStageBytes);
        tma_load_2d(a_s + s * Cfg::kABytes, &tmA, kt * Cfg::kBK, m0, full + 8 * s);
#pragma unroll
        for (int j = 0; j < BN / 64; ++j)
          tma_load_2d(b_s + s * Cfg::kBBytes + j * 8192, &tmB, n0 + 64 * j, kt * Cfg::kBK, full + 8 * s);
      }
    }
    return;
  }

  if constexpr (CONS > 1) regs_grow<232>();
  const int c = wg - 1;
  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(full + 8 * s, (kt / STAGES) & 1);
    const unsigned a0 = a_s + s * Cfg::kABytes + c * 64 * 128;  // this warpgroup's 64 rows of 128 bytes
    const unsigned b0 = b_s + s * Cfg::kBBytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)  // 16 deep each: 32 bytes along A's rows, 16 rows of B's boxes
      wgmma_m64k16<BN>(d, wgmma_desc(a0 + kk * 32, 16, 1024), wgmma_desc(b0 + kk * 2048, 8192, 1024), 1);
    wgmma_commit();
    wgmma_wait<1>();  // step kt - 1 is done with its stage
    if (kt > 0 && t == 0) mbar_arrive(empty + 8 * ((kt - 1) % STAGES));
  }
  wgmma_wait<0>();

  // D fragment: warp w holds rows 16w..16w+15; d[4i..4i+3] = (r, c), (r, c+1), (r+8, c), (r+8, c+1)
  // with r = 16w + lane/4, c = 8i + 2*(lane%4).
  const int w = t / 32, l = t % 32;
  const int r0 = m0 + c * 64 + 16 * w + l / 4;
#pragma unroll
  for (int i = 0; i < BN / 8; ++i) {
    const int gn = n0 + 8 * i + 2 * (l % 4);
    if (gn >= N) continue;  // N % 8 == 0 here, so gn + 1 < N too
    float2 bb = make_float2(0.f, 0.f);
    if (bias) bb = __half22float2(*reinterpret_cast<const __half2*>(bias + gn));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int gm = r0 + 8 * h;
      if (gm < M)
        *reinterpret_cast<__half2*>(C + static_cast<std::size_t>(gm) * ldc + gn) =
            __floats2half2_rn(act<A>(d[4 * i + 2 * h] + bb.x), act<A>(d[4 * i + 2 * h + 1] + bb.y));
    }
  }
#endif
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

// ---- tensor (AMD RDNA3): WMMA 16x16x16 in wave32, a 64x64 tile per block of four waves ---------
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
typedef _Float16 bw_half16 __attribute__((ext_vector_type(16)));
typedef float bw_float8 __attribute__((ext_vector_type(8)));

template <int A>
__global__ void __launch_bounds__(kWmmaThreads)
    bwprof_gemm_wmma(const __half* __restrict__ Am, const __half* __restrict__ Bm, const __half* __restrict__ bias,
                     __half* __restrict__ C, int M, int N, int K, int lda, int ldb, int ldc) {
#if defined(BWPROF_WMMA_DEVICE)
  __shared__ _Float16 As[kWmmaTile][kWmmaK + 8];
  __shared__ _Float16 Bs[kWmmaK][kWmmaTile + 8];
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
      As[r][c] = (gm < M && gk < K) ? static_cast<_Float16>(__half2float(Am[static_cast<std::size_t>(gm) * lda + gk]))
                                    : static_cast<_Float16>(0.f);
      const int br = i / kWmmaTile, bc = i % kWmmaTile;
      const int bk = k0 + br, bn = n0 + bc;
      Bs[br][bc] = (bk < K && bn < N) ? static_cast<_Float16>(__half2float(Bm[static_cast<std::size_t>(bk) * ldb + bn]))
                                      : static_cast<_Float16>(0.f);
    }
    __syncthreads();
    bw_half16 a[2], b[2];
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
      for (int j = 0; j < 2; ++j) acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], b[j], acc[i][j]);
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
          const float v = acc[i][j][e] + (bias ? __half2float(bias[gn]) : 0.f);
          C[static_cast<std::size_t>(gm) * ldc + gn] = __float2half(act<A>(v));
        }
      }
#endif
}

// RDNA3 (gfx11): WMMA in wave32, the mode HIP compiles gfx11 for by default.
bool has_wmma(const std::string& arch, int warp_size) { return arch.rfind("gfx11", 0) == 0 && warp_size == 32; }
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

#if defined(BWPROF_CUDA)
// The Hopper path of `tensor`: wgmma + TMA (kernel above). Used where this build carries sm_90a
// code (BWPROF_HAVE_SM90A), the device is sm_90 and the copy engine can address the operands
// (16-byte aligned rows: K, N and the leading dimensions multiples of 8). Small M too: rows past M
// arrive as zeros, and the deep ring keeps a short, K-long loop fed where mma.sync waited.
// BWPROF_GEMM_WGMMA=0 turns it off (the mma.sync kernel then runs), for comparisons.
bool wgmma_fits(GpuBackend& g, const GemmRunner::Shape& s, const void* A, const void* B, const void* C) {
#if defined(BWPROF_HAVE_SM90A)
  if (const char* e = std::getenv("BWPROF_GEMM_WGMMA"); e && !std::strcmp(e, "0")) return false;
  auto al16 = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return g.info().arch == "sm_90" && s.K % 8 == 0 && s.N % 8 == 0 && s.lda % 8 == 0 &&
         s.ldb % 8 == 0 && s.ldc % 8 == 0 && al16(A) && al16(B) && al16(C);
#else
  (void)g, (void)s, (void)A, (void)B, (void)C;
  return false;
#endif
}

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A row-major FP16 matrix [rows, cols] (leading dimension ld) as a tensor map whose box is
// box_cols x box_rows, 128-byte swizzled; reads outside the matrix return zeros.
CUtensorMap fp16_tensor_map(const void* base, std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_cols,
                            int box_rows) {
  static EncodeTiledFn encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    BWPROF_GPU_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !fn)
      throw Error("cuTensorMapEncodeTiled: not found in the installed driver");
    return reinterpret_cast<EncodeTiledFn>(fn);
  }();
  CUtensorMap m{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base), dims, strides, box, step,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw Error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")");
  return m;
}

// Tile shapes, largest first: the first whose grid fills the GPU, else the last (most blocks).
enum class WgTile { k128x256, k128x128, k64x128, k64x64 };

class WgmmaRunner final : public GemmRunner {
 public:
  WgmmaRunner(GpuBackend& g, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : s_(s), A_(A), B_(B), C_(static_cast<__half*>(C)), bias_(static_cast<const __half*>(bias)), act_(act) {
    check_int_sizes(s);
    // The tile with the least estimated time: waves of blocks (one block an SM) times a tile's
    // work over its rate. Rates: TFLOP/s of each tile shape at 4096^3 on an H100 (all four near
    // 97 % wave efficiency there), 647, 527, 350 and 282.
    const std::int64_t sms = g.sm_count();
    struct Option { WgTile t; int bm, bn; double rate; };
    const Option opts[] = {{WgTile::k128x256, 128, 256, 647}, {WgTile::k128x128, 128, 128, 527},
                           {WgTile::k64x128, 64, 128, 350}, {WgTile::k64x64, 64, 64, 282}};
    double best = 0;
    for (const Option& o : opts) {
      const std::int64_t tiles = ((s.M + o.bm - 1) / o.bm) * ((s.N + o.bn - 1) / o.bn);
      const double est = static_cast<double>((tiles + sms - 1) / sms) * o.bm * o.bn / o.rate;
      if (best == 0 || est < best) best = est, tile_ = o.t;
    }
    if (const char* e = std::getenv("BWPROF_GEMM_TILE")) {  // benchmark knob, as for mma.sync
      if (!std::strcmp(e, "128x256")) tile_ = WgTile::k128x256;
      if (!std::strcmp(e, "128x128")) tile_ = WgTile::k128x128;
      if (!std::strcmp(e, "64x128")) tile_ = WgTile::k64x128;
      if (!std::strcmp(e, "64x64")) tile_ = WgTile::k64x64;
    }
    res_ = dispatch(nullptr, false);
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(hipStream_t st, bool launch) {
    switch (tile_) {
      case WgTile::k128x256: return go<2, 256, 4>(st, launch);
      case WgTile::k128x128: return go<2, 128, 6>(st, launch);
      case WgTile::k64x128: return go<1, 128, 8>(st, launch);
      default: return go<1, 64, 8>(st, launch);
    }
  }
  template <int CONS, int BN, int ST>
  Resources go(hipStream_t st, bool launch) {
    using Cfg = WgCfg<CONS, BN, ST>;
    return with_act(act_, [&](auto a) {
      auto* fn = &bwprof_gemm_wgmma<CONS, BN, ST, decltype(a)::value>;
      if (!launch) {
        tmA_ = fp16_tensor_map(A_, s_.M, s_.K, s_.lda, 64, Cfg::kBM);
        tmB_ = fp16_tensor_map(B_, s_.K, s_.N, s_.ldb, 64, 64);
        BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                             hipFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
        return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
      }
      const dim3 grid(static_cast<unsigned>((s_.N + BN - 1) / BN), static_cast<unsigned>((s_.M + Cfg::kBM - 1) / Cfg::kBM));
      fn<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(tmA_, tmB_, bias_, C_, int(s_.M), int(s_.N), int(s_.K),
                                                       int(s_.ldc));
      BWPROF_CHECK_LAUNCH("bwprof_gemm_wgmma");
      return Resources{};
    });
  }
  Shape s_;
  const void* A_;
  const void* B_;
  __half* C_;
  const __half* bias_;
  Act act_;
  WgTile tile_ = WgTile::k64x64;
  CUtensorMap tmA_{}, tmB_{};
  Resources res_;
};
#endif

#if defined(BWPROF_HIP)
// The AMD matrix-unit kernels (MFMA on CDNA, WMMA on RDNA3): a 64x64 tile a block, plain loads.
class AmdMatrixRunner final : public GemmRunner {
 public:
  enum class Unit { kMfma, kWmma };
  AmdMatrixRunner(Unit u, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : u_(u), s_(s), A_(static_cast<const __half*>(A)), B_(static_cast<const __half*>(B)),
        C_(static_cast<__half*>(C)), bias_(static_cast<const __half*>(bias)), act_(act) {
    check_int_sizes(s);
  }
  void run(hipStream_t st) override {
    const int tile = u_ == Unit::kMfma ? kMfmaTile : kWmmaTile;
    const dim3 grid(static_cast<unsigned>((s_.N + tile - 1) / tile), static_cast<unsigned>((s_.M + tile - 1) / tile));
    with_act(act_, [&](auto a) {
      if (u_ == Unit::kMfma)
        bwprof_gemm_mfma<decltype(a)::value><<<grid, kMfmaThreads, 0, st>>>(A_, B_, bias_, C_, int(s_.M), int(s_.N),
                                                                           int(s_.K), int(s_.lda), int(s_.ldb),
                                                                           int(s_.ldc));
      else
        bwprof_gemm_wmma<decltype(a)::value><<<grid, kWmmaThreads, 0, st>>>(A_, B_, bias_, C_, int(s_.M), int(s_.N),
                                                                           int(s_.K), int(s_.lda), int(s_.ldb),
                                                                           int(s_.ldc));
      return 0;
    });
    BWPROF_CHECK_LAUNCH(u_ == Unit::kMfma ? "bwprof_gemm_mfma" : "bwprof_gemm_wmma");
  }
  Resources resources() const override {
    return with_act(act_, [&](auto a) {
      return u_ == Unit::kMfma ? kernel_resources(bwprof_gemm_mfma<decltype(a)::value>, kMfmaThreads)
                               : kernel_resources(bwprof_gemm_wmma<decltype(a)::value>, kWmmaThreads);
    });
  }

 private:
  Unit u_;
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
      if (wgmma_fits(g, s, A, B, C)) return std::make_unique<WgmmaRunner>(g, s, A, B, C, bias, act);
      return std::make_unique<MmaRunner>(g, s, A, B, C, bias, act);
#else
      if (has_mfma(g.info().arch))
        return std::make_unique<AmdMatrixRunner>(AmdMatrixRunner::Unit::kMfma, s, A, B, C, bias, act);
      if (has_wmma(g.info().arch, g.warp_size()))
        return std::make_unique<AmdMatrixRunner>(AmdMatrixRunner::Unit::kWmma, s, A, B, C, bias, act);
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
