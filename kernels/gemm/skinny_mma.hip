// The `tensor` GEMM for a few rows of A (2-64: decode steps, small batches) on NVIDIA matrix units
// (sm_80+, mma.sync m16n8k16, FP32 accumulation). Its time is reading B once, so the kernel is
// built around B's stream; the multiply runs transposed, C^T = B^T . A^T, so that N fills the
// instruction's 16 rows and M its 8 columns (MT tiles of 8: M up to 8, 16, 32 or 64).
//
// A block of 4 warps takes a slab of kNb = 128 columns of B over a part of K (split K, so that the
// blocks fill every SM's resident slots); warp w owns columns w*32 .. w*32+31. B streams through a
// cp.async pipeline of kStages stages of kKs rows, 16-byte copies that skip the registers, so each
// SM keeps tens of KB in flight. Any alignment at that speed: a stage row holds the 17 aligned
// 16-byte words from the one where the slab's row starts, and its shift (the row's offset in that
// first word, 0-7 elements) is kept beside it; the warps build their fragments from shared memory
// at that offset with 16-bit reads (ldmatrix needs aligned rows: it serves where B's rows are on
// 16 bytes, every shift 0). Words that would reach
// outside B (the last rows, a B that does not start on 16 bytes) are copied element by element.
// A's slice (all its rows over the block's part of K, zero-padded to MT*8 rows) sits in shared
// memory the same way (aligned words and a shift a row), copied in the pipeline's first group.
//
// With one split a block stores C (bias, activation); otherwise it adds its FP32 sums into
// split_k.hip's accumulator [M, N], and the last block of its slab (a counter a slab) turns them
// into C and zeroes the accumulator: one launch. The activation is a run-time argument (it runs in
// the epilogue only), so the kernel has 8 instances: MT in 1, 2, 4, 8 by FP16 and BF16.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "gemm/engines.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

constexpr int kThreads = 128, kNb = 128, kKs = 32, kStages = 4;
constexpr int kWords = kNb / 8 + 1;  // 16-byte words a stage row: the slab plus the shifted tail
// Halves a stage row: 136 = 68 words, so the rows 2t (t = 0..3) that one 16-bit read of a
// fragment touches start 8 banks apart (no conflicts).
constexpr int kBStride = kWords * 8;
constexpr int kBStageElems = kKs * kBStride;
constexpr int kASmemMax = 48 * 1024;  // A's slice in shared memory, at most

__device__ __forceinline__ float act_rt(int a, float x) {
  switch (a) {
    case kActRelu: return act<kActRelu>(x);
    case kActGelu: return act<kActGelu>(x);
    case kActSilu: return act<kActSilu>(x);
    default: return x;
  }
}

// 16 bytes global -> shared, of which the first `bytes` are read and the rest zero-filled.
__device__ __forceinline__ void cp_async16_n(void* dst, const void* src, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
#endif
}

// One 16-byte word of a row segment into shared memory: the aligned word at `word`, of which the
// part inside [lo, hi) (the operand's elements) is copied, asynchronously where it all lies inside.
__device__ __forceinline__ void copy_word(unsigned short* dst, std::uintptr_t word, std::uintptr_t lo,
                                          std::uintptr_t hi) {
  if (word >= lo && word + 16 <= hi) {
    cp_async16_n(dst, reinterpret_cast<const void*>(word), 16);
  } else {  // an edge of the operand: the elements inside it, zeros elsewhere
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const std::uintptr_t p = word + 2 * e;
      dst[e] = p >= lo && p < hi ? *reinterpret_cast<const unsigned short*>(p) : 0;
    }
  }
}

template <class T, int MT>
__global__ void __launch_bounds__(kThreads) bwprof_gemm_skinny_mma(
    const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias, T* __restrict__ C,
    float* __restrict__ acc, int* __restrict__ counters, int M, int N, int K, int lda, int ldb, int ldc, int split_len,
    int act_kind, bool b_aligned) {
  constexpr int MP = MT * 8;  // rows of A held (zero-padded)
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned short* bs = reinterpret_cast<unsigned short*>(smem);  // [kStages][kKs][kBStride]
  unsigned short* as = bs + kStages * kBStageElems;             // [MP][a_words * 8]
  __shared__ unsigned char shifts[kStages][kKs];                // a stage row's offset in its first word
  __shared__ unsigned char a_shifts[MP];
  __shared__ int last;
  // A's rows: the aligned words from the one where the split's part starts (split_len is a multiple
  // of kKs, so a row is 4 words mod 16 banks: the 8 rows a fragment read touches do not collide).
  const int a_words = split_len / 8 + 1, ast = a_words * 8;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int n0 = blockIdx.x * kNb;
  const int k_begin = blockIdx.y * split_len, k_end = min(K, k_begin + split_len);
  const int stages = (k_end - k_begin + kKs - 1) / kKs;
  const unsigned short* Bb = reinterpret_cast<const unsigned short*>(Bm);
  // B's elements lie in [lo, hi): whole words are copied where they lie inside.
  const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(Bb);
  const std::uintptr_t hi = reinterpret_cast<std::uintptr_t>(Bb + (static_cast<std::size_t>(K) - 1) * ldb + N);
  const void* zero_src = reinterpret_cast<const void*>(lo & ~std::uintptr_t(15));

  auto load = [&](int stage, int kt) {
    unsigned short* dst0 = bs + stage * kBStageElems;
    for (int c = tid; c < kKs * kWords; c += kThreads) {
      const int r = c / kWords, j = c % kWords, k = k_begin + kt * kKs + r;
      unsigned short* dst = dst0 + r * kBStride + j * 8;
      if (k >= k_end) {  // past the split: zeros (at shift 0)
        if (j == 0) shifts[stage][r] = 0;
        cp_async16_n(dst, zero_src, 0);
        continue;
      }
      const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(Bb + static_cast<std::size_t>(k) * ldb + n0);
      const std::uintptr_t a0 = row & ~std::uintptr_t(15);
      if (j == 0) shifts[stage][r] = static_cast<unsigned char>((row - a0) / 2);
      copy_word(dst, a0 + 16 * j, lo, hi);
    }
  };

  // A's slice first (one group): MP rows, zeros past M.
  {
    const unsigned short* Ab = reinterpret_cast<const unsigned short*>(Am);
    const std::uintptr_t alo = reinterpret_cast<std::uintptr_t>(Ab);
    const std::uintptr_t ahi = reinterpret_cast<std::uintptr_t>(Ab + (static_cast<std::size_t>(M) - 1) * lda + K);
    for (int c = tid; c < MP * a_words; c += kThreads) {
      const int m = c / a_words, j = c % a_words;
      unsigned short* dst = as + m * ast + j * 8;
      if (m >= M) {
        if (j == 0) a_shifts[m] = 0;
        cp_async16_n(dst, zero_src, 0);
        continue;
      }
      const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(Ab + static_cast<std::size_t>(m) * lda + k_begin);
      const std::uintptr_t a0 = row & ~std::uintptr_t(15);
      if (j == 0) a_shifts[m] = static_cast<unsigned char>((row - a0) / 2);
      copy_word(dst, a0 + 16 * j, alo, ahi);
    }
  }
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < stages) load(s, s);
    cp_async_commit();  // A's words join the first group
  }
  __syncthreads();  // A's shifts (and the element-wise edge words) are in
  int a_off[MT];    // where this lane's row of each 8-row tile of A starts
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) a_off[mt] = (mt * 8 + g) * ast + a_shifts[mt * 8 + g];

  float d[2][MT][4];
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) d[j][mt][q] = 0.f;

  for (int kt = 0; kt < stages; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // stage kt is in; every warp is done with the stage that the next copy fills
    if (kt + kStages - 1 < stages) load((kt + kStages - 1) % kStages, kt + kStages - 1);
    cp_async_commit();
    const int stage = kt % kStages;
    const unsigned short* b = bs + stage * kBStageElems;
#pragma unroll
    for (int kk = 0; kk < kKs; kk += 16) {
      // mma's B operand (A^T, 16 k x 8 m): A[m = g][k = 2t, 2t+1] and [.. + 8], at the row's shift.
      unsigned fb[MT][2];
      const int ka = kt * kKs + kk + 2 * t;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const unsigned short* ar = as + a_off[mt] + ka;
        fb[mt][0] = unsigned(ar[0]) | (unsigned(ar[1]) << 16);
        fb[mt][1] = unsigned(ar[8]) | (unsigned(ar[9]) << 16);
      }
      if (b_aligned) {  // every shift 0, rows on 16 bytes: ldmatrix.trans gives the fragments at once
        // matrix q = lane / 8: rows kk + (q / 2) * 8 + lane % 8, columns + (q % 2) * 8 (a0..a3)
        const unsigned short* pl = b + (kk + lane % 8 + (lane / 16) * 8) * kBStride + ((lane / 8) % 2) * 8;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          unsigned fa[4];
          ldmatrix_x4_trans(fa, pl + warp * 32 + j * 16);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) mma_16816_t<T>(d[j][mt], fa, fb[mt]);
        }
        continue;
      }
      // Rows kk + 2t, +1, +8, +9 of the stage, each at its own shift.
      const int r0 = kk + 2 * t;
      const unsigned short* p0 = b + r0 * kBStride + shifts[stage][r0];
      const unsigned short* p1 = b + (r0 + 1) * kBStride + shifts[stage][r0 + 1];
      const unsigned short* p8 = b + (r0 + 8) * kBStride + shifts[stage][r0 + 8];
      const unsigned short* p9 = b + (r0 + 9) * kBStride + shifts[stage][r0 + 9];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        // mma's A operand (B^T, 16 n x 16 k): B[k][n] for n = g, g + 8 of this 16-column tile.
        const int n = warp * 32 + j * 16 + g;
        unsigned fa[4];
        fa[0] = unsigned(p0[n]) | (unsigned(p1[n]) << 16);
        fa[1] = unsigned(p0[n + 8]) | (unsigned(p1[n + 8]) << 16);
        fa[2] = unsigned(p8[n]) | (unsigned(p9[n]) << 16);
        fa[3] = unsigned(p8[n + 8]) | (unsigned(p9[n + 8]) << 16);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) mma_16816_t<T>(d[j][mt], fa, fb[mt]);
      }
    }
  }
  cp_async_wait<0>();

  // d[j][mt]: (n = g, m = 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1) of its 16 x 8 tile.
  const bool split = gridDim.y > 1;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int n = n0 + warp * 32 + j * 16 + g + (q / 2) * 8, m = mt * 8 + 2 * t + (q % 2);
        if (n >= N || m >= M) continue;
        const float v = d[j][mt][q];
        if (split) atomicAdd(acc + static_cast<std::size_t>(m) * gemm::split_acc_ld(N) + n, v);
        else C[static_cast<std::size_t>(m) * ldc + n] = from_f<T>(act_rt(act_kind, v + (bias ? to_f(bias[n]) : 0.f)));
      }
  if (!split) return;
  __threadfence();  // this block's sums reach L2 before its arrival is counted
  __syncthreads();
  int* counter = counters + blockIdx.x;
  if (tid == 0) last = atomicAdd(counter, 1) == static_cast<int>(gridDim.y) - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int i = tid; i < M * kNb; i += kThreads) {
    const int m = i / kNb, n = n0 + i % kNb;
    if (n >= N) continue;
    const float v = atomicExch(acc + static_cast<std::size_t>(m) * gemm::split_acc_ld(N) + n, 0.f);  // read and zero, in L2
    C[static_cast<std::size_t>(m) * ldc + n] = from_f<T>(act_rt(act_kind, v + (bias ? to_f(bias[n]) : 0.f)));
  }
  if (tid == 0) *counter = 0;  // ready for the next launch
}

class SkinnyMmaRunner final : public GemmRunner {
 public:
  SkinnyMmaRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act,
                  std::int64_t splits_asked)
      : bf16_(dt == DType::kBF16), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(gemm::act_index(act)) {
    gemm::check_int_sizes(s);
    if (dt != DType::kF16 && dt != DType::kBF16) BWPROF_INVALID("dtype: the skinny tensor GEMM takes fp16 and bf16");
    if (s.M < 1 || s.M > gemm::kSmallMaxRows)
      BWPROF_INVALID("M: the skinny tensor GEMM takes 1 to " + std::to_string(gemm::kSmallMaxRows) + " rows");
    mt_ = s.M <= 8 ? 1 : s.M <= 16 ? 2 : s.M <= 32 ? 4 : 8;
    // Rows of B on 16 bytes (every shift 0): the fragments come from ldmatrix.
    b_aligned_ = s.ldb % 8 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
    const std::int64_t tiles = (s.N + kNb - 1) / kNb;
    if (tiles > 2147483647) BWPROF_INVALID("N: too wide for the skinny tensor GEMM's grid");
    tiles_ = static_cast<int>(tiles);
    // The K split (choice.hpp's skinny_plan), by the runtime's count of this kernel's blocks an SM
    // at a split's shared memory.
    static_assert(kNb == gemm::kSkinnyCols && kKs == gemm::kSkinnyStepK && kStages == gemm::kSkinnyStages &&
                      kASmemMax == gemm::kSkinnyASmemMax,
                  "choice.hpp's skinny_plan sees this kernel's geometry");
    max_len_ = std::max(kKs, (kASmemMax / (2 * 8 * mt_) - 8) / kKs * kKs);
    auto per_sm = [&](int len) {
      split_len_ = len;
      res_ = dispatch(nullptr, false);
      return res_.runtime_blocks_per_sm;
    };
    const gemm::SkinnyPlan plan = gemm::skinny_plan(s.M, s.N, s.K, g.sm_count(), per_sm, splits_asked);
    const std::int64_t splits = plan.splits, len = plan.split_len;
    const double waves = plan.waves;
    if (splits > 65535) BWPROF_INVALID("K: too long for the skinny tensor GEMM's split");
    split_len_ = static_cast<int>(len);
    splits_ = static_cast<int>(splits);
    if (splits_ > 1) {
      acc_ = gemm::split_accumulator(s.M, s.N);
      counters_ = DeviceBuffer(static_cast<std::size_t>(tiles_) * sizeof(int), "GEMM split-K tile counters");
      counters_.fill(0);
    }
    res_ = dispatch(nullptr, false);
    char w[32];
    std::snprintf(w, sizeof w, "%g", waves);
    explain_ = "skinny rows " + std::to_string(8 * mt_) + (b_aligned_ ? " aligned" : " unaligned") + " splits " +
               std::to_string(splits_) + " (" + std::to_string(std::int64_t(tiles_) * splits_) + " blocks, waves " + w + ")";
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }
  std::string explain() const override { return explain_; }

 private:
  // Shared memory for a split of `len` rows: B's stages and A's slice.
  int smem_bytes(int len) const { return kStages * kBStageElems * 2 + 8 * mt_ * (len + 8) * 2; }
  Resources dispatch(hipStream_t st, bool launch) {
    return bf16_ ? by_mt<bf16>(st, launch) : by_mt<__half>(st, launch);
  }
  template <class T>
  Resources by_mt(hipStream_t st, bool launch) {
    switch (mt_) {
      case 1: return go<T, 1>(st, launch);
      case 2: return go<T, 2>(st, launch);
      case 4: return go<T, 4>(st, launch);
      default: return go<T, 8>(st, launch);
    }
  }
  template <class T, int MT>
  Resources go(hipStream_t st, bool launch) {
    auto* fn = &bwprof_gemm_skinny_mma<T, MT>;
    const int smem = smem_bytes(split_len_);
    if (!launch) {  // the attribute is the function's, shared by every instance: the most any asks
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                           hipFuncAttributeMaxDynamicSharedMemorySize, smem_bytes(max_len_)));
      return kernel_resources(fn, kThreads, smem);
    }
    const dim3 grid(static_cast<unsigned>(tiles_), static_cast<unsigned>(splits_));
    fn<<<grid, kThreads, smem, st>>>(static_cast<const T*>(A_), static_cast<const T*>(B_),
                                     static_cast<const T*>(bias_), static_cast<T*>(C_), acc_.get<float>(),
                                     counters_.get<int>(), int(s_.M), int(s_.N), int(s_.K), int(s_.lda), int(s_.ldb),
                                     int(s_.ldc), split_len_, act_, b_aligned_);
    BWPROF_CHECK_LAUNCH("bwprof_gemm_skinny_mma");
    return Resources{};
  }

  bool bf16_;
  Shape s_;
  const void* A_;
  const void* B_;
  void* C_;
  const void* bias_;
  int act_;
  int mt_ = 1, tiles_ = 1, splits_ = 1, split_len_ = kKs, max_len_ = kKs;
  bool b_aligned_ = false;
  DeviceBuffer acc_, counters_;
  Resources res_;
  std::string explain_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_skinny_mma(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                  void* C, const void* bias, Act act, std::int64_t splits) {
  return std::make_unique<SkinnyMmaRunner>(g, dtype, s, A, B, C, bias, act, splits);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
