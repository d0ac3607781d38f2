// The `tensor` GEMM where A has a few rows (a decode step's tokens): a matrix-vector product in all
// but name, whose time is reading B once, so it runs on the vector units (FP32 arithmetic) the way
// bwprof's GEMV does rather than on matrix units that would idle on rows of zeros.
//
// A block of 8 warps takes a slab of 256 columns of B (8 a lane, 16 bytes; 248 on unaligned rows,
// below) over a part of K (split K, so that the blocks fill the GPU) for a group of up to 8 rows
// of A; more rows are more groups, the group the fastest grid index so that the groups of a slab
// read B together (from DRAM once, then from L2). Warp w reads rows w, w + 8, ... of its part,
// U rows in flight a lane in a rolling pipeline: slot u's word is used and at once asked for again
// for the slot's next row, so U loads stay under way all along, and the first round goes out
// before A's slice is staged in shared memory (FP32, read as broadcasts). The warps' sums meet in
// shared memory; with one split the block stores C, otherwise it adds into split_k.hip's FP32
// accumulator and the last block of its tile (a counter per tile) turns the sums into C, so one
// launch does it all.
//
// Any alignment at 16-byte speed: on rows that do not start on 16 bytes the 32 lanes load the 32
// aligned 16-byte words from the one where the slab's row starts; lane i (< 31) takes its word and
// lane i + 1's (a shuffle) and shifts the pair by the row's offset (shift_b16, the same for every
// lane of the row): 31 lanes, 248 columns a slab, no extra load. Rows whose aligned words would
// reach outside B (the last rows, a B that does not start on 16 bytes) are read element by element.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)  // only the CUDA dispatch takes it (on request: BWPROF_GEMM_TILE=gemv)
#include <algorithm>
#include <cstdint>
#include <string>

#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_stream_load.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

constexpr int kSkThreads = 256, kSkWarps = 8, kSkGroup = 8;
constexpr int kSkMaxSliceBytes = 16384;  // A's slice in shared memory ([k][MR] floats)
// Columns a block takes: 8 a lane, 32 lanes, 31 on unaligned rows.
constexpr int skinny_cols(bool aligned) { return aligned ? 256 : 248; }

// MR: rows of A a block takes (1, 2, 4 or 8; M > 8: groups of 8). U: rows of B in flight a lane.
template <class T, int MR, int U, bool ALIGNED, int A>
__global__ void __launch_bounds__(kSkThreads, 2)
    bwprof_gemm_skinny(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                       T* __restrict__ C, float* __restrict__ acc, int* __restrict__ counters, int M, int N, int K,
                       int lda, int ldb, int ldc, int groups, int split_len) {
  constexpr int kCols = skinny_cols(ALIGNED);
  extern __shared__ __align__(16) float sa[];  // A's slice, [k][MR]
  __shared__ __align__(16) float red[kSkWarps][256];  // the warps' sums of one row of A
  __shared__ int last;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int group = blockIdx.x % groups, slab = blockIdx.x / groups;
  const int m0 = group * kSkGroup, n0 = slab * kCols, n = n0 + lane * 8;
  const int k_begin = blockIdx.y * split_len, k_end = min(K, k_begin + split_len);
  const unsigned short* Bb = reinterpret_cast<const unsigned short*>(Bm);
  // B's elements lie in [lo, hi): a row's aligned words are loaded where they all lie inside.
  const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(Bb);
  const std::uintptr_t hi = reinterpret_cast<std::uintptr_t>(Bb + (static_cast<std::size_t>(K) - 1) * ldb + N);

  uint4 w[U];  // slot u: this lane's aligned word of its row
  unsigned shift[U];
  bool fast[U];
  auto issue = [&](int u, int kk) {  // slot u's next row, kk
    const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(Bb + static_cast<std::size_t>(kk) * ldb + n0);
    const std::uintptr_t a0 = row & ~std::uintptr_t(15);
    shift[u] = static_cast<unsigned>(row - a0) / 2;
    fast[u] = kk < k_end && a0 >= lo && a0 + 16 * 32 <= hi;
    load_stream_if(w[u], reinterpret_cast<const void*>(a0 + 16 * lane), fast[u]);
  };
#pragma unroll
  for (int u = 0; u < U; ++u) issue(u, k_begin + warp + u * kSkWarps);  // in flight while A is staged

  const int len = k_end - k_begin;
  for (int i = tid; i < len * MR; i += kSkThreads) {  // consecutive threads: consecutive k (coalesced)
    const int m = i / len, kk = i % len;
    sa[kk * MR + m] = m0 + m < M ? to_f(Am[static_cast<std::size_t>(m0 + m) * lda + k_begin + kk]) : 0.f;
  }
  __syncthreads();

  float s[MR][8];
#pragma unroll
  for (int m = 0; m < MR; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) s[m][j] = 0.f;
  for (int k = k_begin + warp; k < k_end; k += kSkWarps * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int kk = k + u * kSkWarps;
      if (kk >= k_end) break;  // the same for the whole warp
      uint4 cw = w[u];
      if (fast[u]) {
        if (!ALIGNED) {
          uint4 nb;  // the next lane's word (lane 31's result is not used)
          nb.x = BWPROF_SHFL_DOWN32(w[u].x, 1), nb.y = BWPROF_SHFL_DOWN32(w[u].y, 1);
          nb.z = BWPROF_SHFL_DOWN32(w[u].z, 1), nb.w = BWPROF_SHFL_DOWN32(w[u].w, 1);
          cw = shift_b16(w[u], nb, shift[u]);
        }
      } else {
        cw = load_b16_tail(Bb + static_cast<std::size_t>(kk) * ldb + n, max(0, min(8, N - n)));
      }
      w[u] = make_uint4(0, 0, 0, 0);
      issue(u, kk + kSkWarps * U);  // slot u's next row, under way while this one is used
      float b[8];
      unpack<T>(cw, b);
      const float* a = sa + (kk - k_begin) * MR;
#pragma unroll
      for (int m = 0; m < MR; ++m) {
        const float am = a[m];
#pragma unroll
        for (int j = 0; j < 8; ++j) s[m][j] = fmaf(am, b[j], s[m][j]);
      }
    }
  }

  // The warps' sums, one row of A at a time; then C, or the accumulator and the last block's C.
  const int col = n0 + tid;
  const bool mine = tid < kCols && col < N;
  const bool split = gridDim.y > 1;
  const float bb = bias && mine ? to_f(bias[col]) : 0.f;
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    float4* r = reinterpret_cast<float4*>(&red[warp][lane * 8]);
    r[0] = make_float4(s[m][0], s[m][1], s[m][2], s[m][3]);
    r[1] = make_float4(s[m][4], s[m][5], s[m][6], s[m][7]);
    __syncthreads();
    float v = 0.f;
#pragma unroll
    for (int q = 0; q < kSkWarps; ++q) v += red[q][tid];
    if (mine && m0 + m < M) {
      if (!split) C[static_cast<std::size_t>(m0 + m) * ldc + col] = from_f<T>(act<A>(v + bb));
      else atomicAdd(acc + static_cast<std::size_t>(m0 + m) * gemm::split_acc_ld(N) + col, v);
    }
    __syncthreads();
  }
  if (!split) return;
  __threadfence();  // this block's sums reach L2 before its arrival is counted
  __syncthreads();
  int* counter = counters + blockIdx.x;
  if (tid == 0) last = atomicAdd(counter, 1) == static_cast<int>(gridDim.y) - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (mine) {
#pragma unroll
    for (int m = 0; m < MR; ++m) {
      if (m0 + m >= M) break;
      const float v = atomicExch(acc + static_cast<std::size_t>(m0 + m) * gemm::split_acc_ld(N) + col, 0.f);  // read and zero, in L2
      C[static_cast<std::size_t>(m0 + m) * ldc + col] = from_f<T>(act<A>(v + bb));
    }
  }
  if (tid == 0) *counter = 0;  // ready for the next launch
}

class SkinnyRunner final : public GemmRunner {
 public:
  SkinnyRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : dt_(dt), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act), sms_(g.sm_count()) {
    gemm::check_int_sizes(s);
    if (s.M > gemm::kSkinnyMaxRows)
      BWPROF_INVALID("M: the skinny GEMM takes at most " + std::to_string(gemm::kSkinnyMaxRows) + " rows");
    mr_ = s.M <= 1 ? 1 : s.M <= 2 ? 2 : s.M <= 4 ? 4 : 8;
    groups_ = static_cast<int>((s.M + kSkGroup - 1) / kSkGroup);
    aligned_ = s.N % 8 == 0 && s.ldb % 8 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
    // Split K until the blocks fill every SM's resident slots once (as the runtime reports them
    // for this kernel), each split at least 64 rows of B and at most what A's slice in shared
    // memory holds (16 KB).
    split_len_ = 64;
    res_ = dispatch(nullptr, false);
    const int cols = skinny_cols(aligned_);
    const std::int64_t tiles = groups_ * ((s.N + cols - 1) / cols);
    const std::int64_t want = std::int64_t(std::max(1, res_.runtime_blocks_per_sm)) * sms_;
    const std::int64_t max_len = kSkMaxSliceBytes / (4 * mr_);
    std::int64_t splits = std::min<std::int64_t>((want + tiles - 1) / tiles, (s.K + 63) / 64);
    splits = std::max<std::int64_t>({splits, (s.K + max_len - 1) / max_len, 1});
    if (const auto n = knob_int("BWPROF_GEMM_SPLITS", 1, 65535))  // benchmark knob
      splits = std::min<std::int64_t>(std::max<std::int64_t>(*n, (s.K + max_len - 1) / max_len), s.K);
    if (splits > 65535) BWPROF_INVALID("K: too long for the skinny GEMM's split");
    split_len_ = static_cast<int>((s.K + splits - 1) / splits);
    splits_ = static_cast<int>((s.K + split_len_ - 1) / split_len_);
    if (tiles > 2147483647) BWPROF_INVALID("N: too wide for the skinny GEMM's grid");
    tiles_ = static_cast<int>(tiles);
    if (splits_ > 1) {
      acc_ = gemm::split_accumulator(s.M, s.N);
      counters_ = DeviceBuffer(static_cast<std::size_t>(tiles) * sizeof(int), "GEMM split-K tile counters");
      counters_.fill(0);
    }
    res_ = dispatch(nullptr, false);
    gemm::explain("gemv rows " + std::to_string(mr_) + (aligned_ ? " aligned" : " unaligned") + " splits " +
                  std::to_string(splits_) + " (" + std::to_string(std::int64_t(tiles_) * splits_) + " blocks)");
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
          case 1: return by_align<T, 1, 16, 16>(st, launch);
          case 2: return by_align<T, 2, 16, 12>(st, launch);
          case 4: return by_align<T, 4, 12, 10>(st, launch);
          default: return by_align<T, 8, 8, 6>(st, launch);
        }
      }
    });
  }
  // Rows of B in flight a lane (one word each), aligned and not (a row's shift and predicate held
  // too): as many as fit in 128 registers beside the MR x 8 sums, so that two blocks share an SM
  // (ptxas -v, sm_90a: no spills).
  template <class T, int MR, int U_ALIGNED, int U_UNALIGNED>
  Resources by_align(hipStream_t st, bool launch) {
    return aligned_ ? go<T, MR, U_ALIGNED, true>(st, launch) : go<T, MR, U_UNALIGNED, false>(st, launch);
  }
  template <class T, int MR, int U, bool AL>
  Resources go(hipStream_t st, bool launch) {
    return gemm::with_act(act_, [&](auto a) {
      auto* fn = &bwprof_gemm_skinny<T, MR, U, AL, decltype(a)::value>;
      const int smem = split_len_ * MR * 4;
      if (!launch) return kernel_resources(fn, kSkThreads, smem);
      const dim3 grid(static_cast<unsigned>(tiles_), static_cast<unsigned>(splits_));
      fn<<<grid, kSkThreads, smem, st>>>(static_cast<const T*>(A_), static_cast<const T*>(B_),
                                         static_cast<const T*>(bias_), static_cast<T*>(C_), acc_.get<float>(),
                                         counters_.get<int>(), int(s_.M), int(s_.N), int(s_.K), int(s_.lda),
                                         int(s_.ldb), int(s_.ldc), groups_, split_len_);
      BWPROF_CHECK_LAUNCH("bwprof_gemm_skinny");
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
  int mr_ = 1, groups_ = 1, tiles_ = 1, splits_ = 1, split_len_ = 64;
  bool aligned_ = false;
  DeviceBuffer acc_, counters_;
  Resources res_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_skinny(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                              void* C, const void* bias, Act act) {
  return std::make_unique<SkinnyRunner>(g, dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
