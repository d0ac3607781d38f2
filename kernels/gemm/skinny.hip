// The `tensor` GEMM where A has a few rows (M <= kSkinnyRows: a decode step's tokens): a matrix-
// vector product in all but name, whose time is reading B once, so it runs on the vector units
// (FP32 arithmetic) the way bwprof's GEMV does rather than on matrix units that would idle on
// rows of zeros. A block of 8 warps takes 256 columns of B (8 a lane, one 16-byte vector) over a
// part of K: warp w reads rows w, w + 8, ... four at a time in flight, each thread keeping the MR
// rows' sums of its 8 columns; A's slice waits in shared memory (FP32) and is read as a
// broadcast. The warps' sums meet in shared memory; with K split over several blocks (so that the
// blocks fill the GPU) they are added into split_k.hip's accumulator.
// Rows of B that start off a 16-byte boundary (N or the leading dimension not a multiple of 8) are
// read with aligned 4-byte loads joined by funnel shifts (load8_b16), not element by element.
#include <algorithm>
#include <cstdint>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

constexpr int kSkThreads = 256, kSkWarps = 8, kSkCols = 256, kSkUnroll = 4;
constexpr int kSkSmemFloats = 4096;  // A's slice ([k][MR]), then the warps' sums ([MR][256])

template <class T, int MR, bool ALIGNED, int A>
__global__ void __launch_bounds__(kSkThreads)
    bwprof_gemm_skinny(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                       T* __restrict__ C, float* __restrict__ acc, int M, int N, int K, int lda, int ldb, int ldc,
                       int split_len) {
  __shared__ float sa[kSkSmemFloats];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int n = blockIdx.x * kSkCols + lane * 8;
  const int k_begin = blockIdx.y * split_len, k_end = min(K, k_begin + split_len);
  for (int i = tid; i < (k_end - k_begin) * MR; i += kSkThreads) {
    const int kk = i / MR, m = i % MR;
    sa[i] = m < M ? to_f(Am[static_cast<std::size_t>(m) * lda + k_begin + kk]) : 0.f;
  }
  __syncthreads();
  float s[MR][8];
#pragma unroll
  for (int m = 0; m < MR; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) s[m][j] = 0.f;
  const unsigned short* Bb = reinterpret_cast<const unsigned short*>(Bm);
  const bool whole = n + 8 <= N;
  for (int k = k_begin + warp; k < k_end; k += kSkWarps * kSkUnroll) {
    uint4 bv[kSkUnroll];
#pragma unroll
    for (int u = 0; u < kSkUnroll; ++u) {
      const int kk = k + u * kSkWarps;
      bv[u] = make_uint4(0, 0, 0, 0);
      if (kk < k_end && n < N) {
        const unsigned short* p = Bb + static_cast<std::size_t>(kk) * ldb + n;
        if (!whole) bv[u] = load_b16_tail(p, N - n);
        else if (ALIGNED) bv[u] = *reinterpret_cast<const uint4*>(p);
        else bv[u] = load8_b16(p, n + 8 < N || kk + 1 < K || ldb > N);  // the element after: inside B
      }
    }
#pragma unroll
    for (int u = 0; u < kSkUnroll; ++u) {
      const int kk = k + u * kSkWarps;
      if (kk < k_end) {
        float b[8];
        unpack<T>(bv[u], b);
        const float* a = sa + (kk - k_begin) * MR;
#pragma unroll
        for (int m = 0; m < MR; ++m) {
          const float am = a[m];
#pragma unroll
          for (int j = 0; j < 8; ++j) s[m][j] = fmaf(am, b[j], s[m][j]);
        }
      }
    }
  }
  __syncthreads();  // A's slice is read: the space takes the warps' sums
  float* red = sa;
  for (int i = tid; i < MR * kSkCols; i += kSkThreads) red[i] = 0.f;
  __syncthreads();
#pragma unroll
  for (int m = 0; m < MR; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) atomicAdd(red + m * kSkCols + lane * 8 + j, s[m][j]);
  __syncthreads();
  const int col = blockIdx.x * kSkCols + tid;
  if (col >= N) return;
  const float bb = bias ? to_f(bias[col]) : 0.f;
  for (int m = 0; m < M; ++m) {
    const float v = red[m * kSkCols + tid];
    if (gridDim.y == 1) C[static_cast<std::size_t>(m) * ldc + col] = from_f<T>(act<A>(v + bb));
    else atomicAdd(acc + static_cast<std::size_t>(m) * N + col, v);
  }
}

class SkinnyRunner final : public GemmRunner {
 public:
  SkinnyRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : dt_(dt), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act), sms_(g.sm_count()) {
    gemm::check_int_sizes(s);
    if (s.M > gemm::kSkinnyRows) BWPROF_INVALID("M: the skinny GEMM takes at most " + std::to_string(gemm::kSkinnyRows) + " rows");
    mr_ = s.M <= 1 ? 1 : s.M <= 2 ? 2 : s.M <= 4 ? 4 : 8;
    aligned_ = s.N % 8 == 0 && s.ldb % 8 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
    // Split K until the blocks fill the GPU twice over (its blocks an SM, as the runtime reports
    // them), each split at least 64 rows of B and at most what A's slice in shared memory holds.
    res_ = dispatch(nullptr, false);
    const std::int64_t col_blocks = (s.N + kSkCols - 1) / kSkCols;
    const std::int64_t want = 2ll * std::max(1, res_.runtime_blocks_per_sm) * sms_;
    const std::int64_t max_len = kSkSmemFloats / mr_;
    std::int64_t splits = std::min<std::int64_t>({(want + col_blocks - 1) / col_blocks, (s.K + 63) / 64,
                                                  gemm::kMaxSplits});
    splits = std::max<std::int64_t>({splits, (s.K + max_len - 1) / max_len, 1});
    if (splits > 65535) BWPROF_INVALID("K: too long for the skinny GEMM's split");
    split_len_ = static_cast<int>((s.K + splits - 1) / splits);
    splits_ = static_cast<int>((s.K + split_len_ - 1) / split_len_);
    if (splits_ > 1) acc_ = gemm::split_accumulator(s.M, s.N);
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(hipStream_t st, bool launch) {
    return by_dtype(dt_, [&](auto t) {
      using T = typename decltype(t)::type;
      if constexpr (sizeof(T) != 2) {
        BWPROF_INVALID("dtype: the skinny GEMM takes fp16 and bf16");
        return Resources{};
      } else {
        switch (mr_) {
          case 1: return by_align<T, 1>(st, launch);
          case 2: return by_align<T, 2>(st, launch);
          case 4: return by_align<T, 4>(st, launch);
          default: return by_align<T, 8>(st, launch);
        }
      }
    });
  }
  template <class T, int MR>
  Resources by_align(hipStream_t st, bool launch) {
    return aligned_ ? go<T, MR, true>(st, launch) : go<T, MR, false>(st, launch);
  }
  template <class T, int MR, bool AL>
  Resources go(hipStream_t st, bool launch) {
    return gemm::with_act(splits_ > 1 ? Act::kNone : act_, [&](auto a) {
      auto* fn = &bwprof_gemm_skinny<T, MR, AL, decltype(a)::value>;
      if (!launch) return kernel_resources(fn, kSkThreads);
      const dim3 grid(static_cast<unsigned>((s_.N + kSkCols - 1) / kSkCols), static_cast<unsigned>(splits_));
      fn<<<grid, kSkThreads, 0, st>>>(static_cast<const T*>(A_), static_cast<const T*>(B_),
                                      static_cast<const T*>(bias_), static_cast<T*>(C_), acc_.get<float>(), int(s_.M),
                                      int(s_.N), int(s_.K), int(s_.lda), int(s_.ldb), int(s_.ldc), split_len_);
      BWPROF_CHECK_LAUNCH("bwprof_gemm_skinny");
      if (splits_ > 1) gemm::split_finish(dt_, act_, acc_.get<float>(), bias_, C_, s_.M, s_.N, s_.ldc, sms_, st);
      return Resources{};
    });
  }

  DType dt_;
  Shape s_;
  const void* A_;
  const void* B_;
  void* C_;
  const void* bias_;
  Act act_;
  int sms_;
  int mr_ = 1, splits_ = 1, split_len_ = 1;
  bool aligned_ = false;
  DeviceBuffer acc_;
  Resources res_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_skinny(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                              void* C, const void* bias, Act act) {
  return std::make_unique<SkinnyRunner>(g, dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
