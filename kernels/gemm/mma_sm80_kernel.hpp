// The `tensor` GEMM's mma.sync kernel (sm_80+): m16n8k16 on tiles fed by a cp.async multi-stage
// pipeline and ldmatrix, FP16 or BF16 operands, FP32 accumulation; rows off 16 bytes realigned in
// shared memory or loaded through registers; K split over blocks. Included by mma_sm80_launch.hpp alone (the
// runner, mma_sm80.hip, chooses the tile, the load and the split), in CUDA builds.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cstddef>

#include "common/gpu_common.hpp"
#include "common/gpu_mma.hpp"
#include "gemm/choice.hpp"

namespace bwprof {
namespace {

using namespace gpu;

// How a stage reaches shared memory (the kernel's LOAD):
//   kLoadAsync    cp.async of whole 16-byte pieces (rows on 16 bytes: K, N, lda, ldb multiples of 8)
//   kLoadRealign  rows at any 2-byte offset, A and B starting on 16 bytes: cp.async of the aligned
//                 16-byte window around each row's piece of the tile (one piece more than the row's),
//                 then, when the stage is used, a pass that shifts each row by its offset into one
//                 aligned buffer (shifted8) for ldmatrix: the loads stay asynchronous and STAGES deep
//   kLoadRegs     rows at any 2-byte offset and any base: aligned 4-byte loads into registers one
//                 stage ahead, joined by funnel shifts (load8_b16)
enum : int { kLoadAsync = 0, kLoadRealign = 1, kLoadRegs = 2 };

// BK: K per pipeline stage (64 halves the barriers per multiply-add against 32).
template <int BM, int BN, int WM, int WN, int STAGES, int BK, int LOAD>
struct MmaConfig {
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kAStride = BK + 8;  // halves; +16 bytes keeps ldmatrix's 8 rows in 8 bank groups
  static constexpr int kBStride = BN + 8;  // (and holds a row's aligned window, one piece longer)
  static constexpr int kStageElems = BM * kAStride + BK * kBStride;
  static constexpr int kSmemBytes = (LOAD == kLoadRealign ? STAGES + 1 : STAGES) * kStageElems * 2;
};

// 8 elements of a shared-memory row from s (0..7) elements past p (p on 16 bytes, the row's
// window at least 16 elements from p): five aligned 4-byte loads from the word that holds element s,
// joined by a 16-bit funnel shift where s is odd.
__device__ __forceinline__ uint4 shifted8(const void* p, unsigned s) {
  const unsigned* w = static_cast<const unsigned*>(p) + s / 2;
  const unsigned r = (s & 1u) * 16u, x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3], x4 = w[4];
  return make_uint4(__funnelshift_r(x0, x1, r), __funnelshift_r(x1, x2, r), __funnelshift_r(x2, x3, r),
                    __funnelshift_r(x3, x4, r));
}

// v's 8 elements with those from n on (n < 8; none where n <= 0) made zero.
__device__ __forceinline__ uint4 keep_b16(uint4 v, int n) {
  auto m = [&](int w) { return n >= 2 * w + 2 ? 0xffffffffu : n == 2 * w + 1 ? 0x0000ffffu : 0u; };
  return make_uint4(v.x & m(0), v.y & m(1), v.z & m(2), v.w & m(3));
}

// LOAD (above): kLoadAsync where K, N and the leading dimensions are multiples of 8, so every 16-byte
// piece of a row is wholly inside or outside the matrix and cp.async can move it. Otherwise (odd N or
// K: rows start at any 2-byte boundary) kLoadRealign, or kLoadRegs where A or B does not start on 16
// bytes: each thread loads its pieces into registers one stage ahead and stores them to shared
// memory after the stage's multiply-adds, so that the loads' latency hides behind the matrix units.
// Split K: grid.z blocks share an output tile, each taking split_len of K (a multiple of kMmaK);
// with more than one they add FP32 partial sums into split_k.hip's accumulator (add4: four columns
// a vector reduction, after a swap within each lane pair; else an atomic an element). Then either
// split_k.hip's finishing kernel applies the bias and activation and stores C (tile_count null), or
// the last block of each tile to count itself in tile_count does so for its tile and zeroes its part
// of the accumulator and its count for the next launch: one launch instead of two. Warps skip the
// multiply-adds of their 16-row slices that lie wholly past M.
template <class T, int BM, int BN, int WM, int WN, int STAGES, int kMmaK, int LOAD, int A>
__global__ void __launch_bounds__(MmaConfig<BM, BN, WM, WN, STAGES, kMmaK, LOAD>::kThreads)
    bwprof_gemm_mma(const T* __restrict__ Am, const T* __restrict__ Bm, const T* __restrict__ bias,
                    T* __restrict__ C, float* __restrict__ split_acc, int* __restrict__ tile_count, int M, int N, int K,
                    int lda, int ldb, int ldc, int split_len, int add4) {
  using Cfg = MmaConfig<BM, BN, WM, WN, STAGES, kMmaK, LOAD>;
  constexpr bool ALIGNED = LOAD == kLoadAsync, REGS = LOAD == kLoadRegs;
  constexpr int AS = Cfg::kAStride, BS = Cfg::kBStride, THREADS = Cfg::kThreads;
  constexpr int MT = WM / 16, NT = WN / 8;
  constexpr int kAChunks = BM * kMmaK / 8, kBChunks = kMmaK * BN / 8;  // 16-byte pieces of a stage
  constexpr int kAPer = (kAChunks + THREADS - 1) / THREADS, kBPer = (kBChunks + THREADS - 1) / THREADS;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* As = reinterpret_cast<T*>(smem_raw);
  T* Bs = As + STAGES * BM * AS;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / Cfg::kWarpsN, wn = warp % Cfg::kWarpsN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_begin = blockIdx.z * split_len, k_end = min(K, k_begin + split_len);
  const int ktiles = k_end > k_begin ? (k_end - k_begin + kMmaK - 1) / kMmaK : 0;
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  // The unaligned path's registers: one stage of this thread's pieces of A and B.
  uint4 ra[REGS ? kAPer : 1], rb[REGS ? kBPer : 1];
  // 8 elements of a row from column col, zeros from col_end on; `after_ok`: the element after the
  // eighth lies inside the matrix's allocation (its row or the next).
  auto piece = [&](const T* base, std::size_t row_off, int col, int col_end, bool row_in, bool after_ok) {
    const unsigned short* p = reinterpret_cast<const unsigned short*>(base) + row_off + col;
    if (!row_in || col >= col_end) return make_uint4(0, 0, 0, 0);
    return col + 8 <= col_end ? load8_b16(p, after_ok) : load_b16_tail(p, col_end - col);
  };
  auto fetch = [&](int kt) {  // unaligned: global -> registers
    const int k0 = k_begin + kt * kMmaK;
#pragma unroll
    for (int u = 0; u < kAPer; ++u) {
      const int c = tid + u * THREADS;
      const int r = c / (kMmaK / 8), kc = (c % (kMmaK / 8)) * 8;
      const int gm = m0 + r;
      ra[REGS ? u : 0] = c < kAChunks ? piece(Am, static_cast<std::size_t>(gm) * lda, k0 + kc, k_end, gm < M,
                                                 k0 + kc + 8 < K || gm + 1 < M || lda > K)
                                         : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kBPer; ++u) {
      const int c = tid + u * THREADS;
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int gk = k0 + r;
      rb[REGS ? u : 0] = c < kBChunks ? piece(Bm, static_cast<std::size_t>(gk) * ldb, n0 + nc, N, gk < k_end,
                                                 n0 + nc + 8 < N || gk + 1 < K || ldb > N)
                                         : make_uint4(0, 0, 0, 0);
    }
  };
  auto stash = [&](int stage) {  // unaligned: registers -> shared memory
    T* as = As + stage * BM * AS;
    T* bs = Bs + stage * kMmaK * BS;
#pragma unroll
    for (int u = 0; u < kAPer; ++u) {
      const int c = tid + u * THREADS;
      if (c < kAChunks)
        *reinterpret_cast<uint4*>(as + (c / (kMmaK / 8)) * AS + (c % (kMmaK / 8)) * 8) = ra[REGS ? u : 0];
    }
#pragma unroll
    for (int u = 0; u < kBPer; ++u) {
      const int c = tid + u * THREADS;
      if (c < kBChunks) *reinterpret_cast<uint4*>(bs + (c / (BN / 8)) * BS + (c % (BN / 8)) * 8) = rb[REGS ? u : 0];
    }
  };
  auto load_async = [&](int stage, int kt) {  // aligned: cp.async global -> shared memory
    const int k0 = k_begin + kt * kMmaK;
    T* as = As + stage * BM * AS;
    T* bs = Bs + stage * kMmaK * BS;
#pragma unroll
    for (int c = tid; c < kAChunks; c += THREADS) {
      const int r = c / (kMmaK / 8), kc = (c % (kMmaK / 8)) * 8;
      const int gm = m0 + r, gk = k0 + kc;
      const bool in = gm < M && gk < k_end;
      cp_async16(as + r * AS + kc, in ? Am + static_cast<std::size_t>(gm) * lda + gk : Am, in);
    }
#pragma unroll
    for (int c = tid; c < kBChunks; c += THREADS) {
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int gk = k0 + r, gn = n0 + nc;
      const bool in = gk < k_end && gn < N;
      cp_async16(bs + r * BS + nc, in ? Bm + static_cast<std::size_t>(gk) * ldb + gn : Bm, in);
    }
  };
  // kLoadRealign: each row's window, from the 16-byte boundary at or before the row's first element
  // of the tile, one 16-byte piece more than the tile's; pieces past the matrix's last element read
  // only up to it. Rows outside the matrix (or this block's K) are not read. A step along K moves a
  // window by kMmaK elements of A and kMmaK rows of B, both multiples of 8: each piece's place in its
  // 16-byte window and its row's shift stay as they were at k_begin, so they are worked out once.
  constexpr bool RA = LOAD == kLoadRealign;
  constexpr int kAWin = kMmaK / 8 + 1, kBWin = BN / 8 + 1;  // 16-byte pieces a row's window
  constexpr int kARaw = (BM * kAWin + THREADS - 1) / THREADS, kBRaw = (kMmaK * kBWin + THREADS - 1) / THREADS;
  constexpr int kAOut = (BM * (kMmaK / 8) + THREADS - 1) / THREADS, kBOut = (kMmaK * (BN / 8) + THREADS - 1) / THREADS;
  static_assert(!RA || (kAOut + kBOut) * 4 <= 64, "realign: a 4-bit shift for each of a thread's pieces");
  const long long a_end = static_cast<long long>(M - 1) * lda + K, b_end = static_cast<long long>(K - 1) * ldb + N;
  const T* a_src[RA ? kARaw : 1];  // a piece's first element at k_begin; null: none
  const T* b_src[RA ? kBRaw : 1];
  unsigned long long shifts = 0;  // realign()'s pieces: their rows' offsets from 16 bytes, 4 bits each
  T* Aal = As + STAGES * Cfg::kStageElems;  // the aligned buffer, past the STAGES stages
  T* Bal = Aal + BM * AS;
  // Whether a window of this block can reach past the matrix's last element (only then are the
  // pieces' lengths worked out: block-uniform).
  const bool a_clamp = static_cast<long long>(min(M, m0 + BM) - 1) * lda + k_begin + ktiles * kMmaK + 8 > a_end;
  const bool b_clamp = static_cast<long long>(k_end - 1) * ldb + n0 + BN + 8 > b_end;
  if constexpr (RA) {
#pragma unroll
    for (int u = 0; u < kARaw; ++u) {
      const int c = tid + u * THREADS, r = c / kAWin, i = c % kAWin;
      a_src[u] = c < BM * kAWin && m0 + r < M ? Am + ((static_cast<long long>(m0 + r) * lda + k_begin) & ~7LL) + 8 * i : nullptr;
    }
#pragma unroll
    for (int u = 0; u < kBRaw; ++u) {
      const int c = tid + u * THREADS, r = c / kBWin, i = c % kBWin;
      b_src[u] = c < kMmaK * kBWin ? Bm + ((static_cast<long long>(k_begin + r) * ldb + n0) & ~7LL) + 8 * i : nullptr;
    }
#pragma unroll
    for (int u = 0; u < kAOut; ++u) {
      const long long r = (tid + u * THREADS) / (kMmaK / 8);
      shifts |= static_cast<unsigned long long>(((m0 + r) * lda + k_begin) & 7) << (4 * u);
    }
#pragma unroll
    for (int u = 0; u < kBOut; ++u) {
      const long long r = (tid + u * THREADS) / (BN / 8);
      shifts |= static_cast<unsigned long long>(((k_begin + r) * ldb + n0) & 7) << (4 * (kAOut + u));
    }
    // Rows of A past M: zeros in the aligned buffer once (realign() leaves them; the loop's first
    // barrier orders these stores before any multiply-add).
    for (int c = tid; c < BM * (kMmaK / 8); c += THREADS)
      if (m0 + c / (kMmaK / 8) >= M) *reinterpret_cast<uint4*>(Aal + (c / (kMmaK / 8)) * AS + (c % (kMmaK / 8)) * 8) = make_uint4(0, 0, 0, 0);
  }
  // A window's piece; where it can reach past the matrix (clamp), only up to the last element
  // (`base`: the matrix, `stop`: past its last element): the piece that holds the last element is
  // read an element at a time (cp.async reads whole pieces), those past it are zeros.
  auto window = [&](T* dst, const T* src, const T* base, long long stop, bool clamp) {
    const long long left = clamp ? base + stop - src : 8;
    if (left >= 8) return cp_async16(dst, src, true);
    *reinterpret_cast<uint4*>(dst) = left <= 0 ? make_uint4(0, 0, 0, 0)
                                               : load_b16_tail(reinterpret_cast<const unsigned short*>(src), static_cast<int>(left));
  };
  auto load_raw = [&](int stage, int kt) {
    const long long step_a = static_cast<long long>(kt) * kMmaK, step_b = step_a * ldb;
    const int rows_b = k_end - (k_begin + kt * kMmaK);  // rows of B in this block's K
    T* as = As + stage * BM * AS;
    T* bs = Bs + stage * kMmaK * BS;
#pragma unroll
    for (int u = 0; u < kARaw; ++u) {
      const int c = tid + u * THREADS;
      if (a_src[u]) window(as + (c / kAWin) * AS + (c % kAWin) * 8, a_src[u] + step_a, Am, a_end, a_clamp);
    }
#pragma unroll
    for (int u = 0; u < kBRaw; ++u) {
      const int c = tid + u * THREADS;
      if (b_src[u] && c / kBWin < rows_b) window(bs + (c / kBWin) * BS + (c % kBWin) * 8, b_src[u] + step_b, Bm, b_end, b_clamp);
    }
  };
  // kLoadRealign: the stage's windows shifted by each row's offset into the aligned buffer, zeros in
  // the rows of B and the columns of A past this block's K (columns of B past N only reach outputs
  // past N, which are not stored).
  auto realign = [&](int stage, int kt) {
    const int k0 = k_begin + kt * kMmaK;
    const T* as = As + stage * BM * AS;
    const T* bs = Bs + stage * kMmaK * BS;
#pragma unroll
    for (int u = 0; u < kAOut; ++u) {
      const int c = tid + u * THREADS, r = c / (kMmaK / 8), j = c % (kMmaK / 8);
      if (c < BM * (kMmaK / 8) && m0 + r < M) {
        uint4 v = shifted8(as + r * AS + 8 * j, static_cast<unsigned>(shifts >> (4 * u)) & 15u);
        if (k0 + kMmaK > k_end) v = keep_b16(v, k_end - (k0 + 8 * j));
        *reinterpret_cast<uint4*>(Aal + r * AS + 8 * j) = v;
      }
    }
#pragma unroll
    for (int u = 0; u < kBOut; ++u) {
      const int c = tid + u * THREADS, r = c / (BN / 8), j = c % (BN / 8);
      if (c < kMmaK * (BN / 8)) {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (k0 + r < k_end) {
          v = shifted8(bs + r * BS + 8 * j, static_cast<unsigned>(shifts >> (4 * (kAOut + u))) & 15u);
        }
        *reinterpret_cast<uint4*>(Bal + r * BS + 8 * j) = v;
      }
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) {
      if (ALIGNED) {
        load_async(s, s);
      } else if (!REGS) {
        load_raw(s, s);
      } else {
        fetch(s);
        stash(s);
      }
    }
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt is in shared memory, and every warp is done with tile kt - 1
    const int next = kt + STAGES - 1;
    if (!REGS) {
      if (next < ktiles) {
        if (ALIGNED)
          load_async(next % STAGES, next);
        else
          load_raw(next % STAGES, next);
      }
      cp_async_commit();
    } else if (next < ktiles) {
      fetch(next);  // in flight during this tile's multiply-adds
    }
    if (!ALIGNED && !REGS) {
      realign(kt % STAGES, kt);
      __syncthreads();  // the aligned buffer holds tile kt
    }
    const T* as = ALIGNED || REGS ? As + (kt % STAGES) * BM * AS : Aal;
    const T* bs = ALIGNED || REGS ? Bs + (kt % STAGES) * kMmaK * BS : Bal;
#pragma unroll
    for (int kk = 0; kk < kMmaK; kk += 16) {
      unsigned a[MT][4], b[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i)  // (16 rows of the warp's wholly past M: no loads, no multiply-adds)
        if (m0 + wm * WM + i * 16 < M) ldmatrix_x4(a[i], as + (wm * WM + i * 16 + (lane % 16)) * AS + kk + (lane / 16) * 8);
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) {
        unsigned r[4];
        ldmatrix_x4_trans(r, bs + (kk + (lane % 8) + ((lane / 8) % 2) * 8) * BS + wn * WN + j * 16 + (lane / 16) * 8);
        b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
        if (m0 + wm * WM + i * 16 < M)
#pragma unroll
          for (int j = 0; j < NT; ++j) mma_16816_t<T>(acc[i][j], a[i], b[j]);
    }
    // Stage next % STAGES held tile kt - 1, which every warp finished before this iteration's barrier.
    if (REGS && next < ktiles) stash(next % STAGES);
  }
  cp_async_wait<0>();

  const int g = lane / 4, t = lane % 4;
  const bool split = gridDim.z > 1;
  const std::size_t ald = static_cast<std::size_t>(gemm::split_acc_ld(N));  // the accumulator's rows: 16 bytes apart
  if (split && add4) {
    // Partial sums four columns at a time: lanes t and t ^ 1 swap halves, the even lane then holds
    // row g's four columns from 2t, the odd lane row g + 8's from 2t - 2, each one vector reduction
    // instead of four atomics (a quad that passes N, at the row's end: an atomic a column in it).
    const bool odd = t & 1;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int gm = m0 + wm * WM + i * 16 + g + (odd ? 8 : 0);
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const float* c = acc[i][j];
        const float s0 = __shfl_xor_sync(0xffffffffu, odd ? c[0] : c[2], 1);
        const float s1 = __shfl_xor_sync(0xffffffffu, odd ? c[1] : c[3], 1);
        const int gn = n0 + wn * WN + j * 8 + 2 * (t & ~1);
        if (gm < M && gn < N) {
          float* p = split_acc + static_cast<std::size_t>(gm) * ald + gn;
          const float v[4] = {odd ? s0 : c[0], odd ? s1 : c[1], odd ? c[2] : s0, odd ? c[3] : s1};
          if (gn + 3 < N) {
            red_add4(p, v[0], v[1], v[2], v[3]);
          } else {
#pragma unroll
            for (int e = 0; e < 3; ++e)
              if (gn + e < N) atomicAdd(p + e, v[e]);
          }
        }
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int gm = m0 + wm * WM + i * 16 + g + 8 * h;
        if (gm >= M) continue;
        T* crow = C + static_cast<std::size_t>(gm) * ldc;
        float* arow = split_acc + static_cast<std::size_t>(gm) * ald;
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const int gn = n0 + wn * WN + j * 8 + 2 * t;
          float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
          if (split) {
            if (gn < N) atomicAdd(arow + gn, v0);
            if (gn + 1 < N) atomicAdd(arow + gn + 1, v1);
          } else if (ALIGNED && gn + 1 < N) {
            if (bias) {
              const float2 bb = unpack2<T>(*reinterpret_cast<const unsigned*>(bias + gn));
              v0 += bb.x, v1 += bb.y;
            }
            *reinterpret_cast<unsigned*>(crow + gn) = pack2<T>(act<A>(v0), act<A>(v1));
          } else {
            if (gn < N) crow[gn] = from_f<T>(act<A>(v0 + (bias ? to_f(bias[gn]) : 0.f)));
            if (gn + 1 < N) crow[gn + 1] = from_f<T>(act<A>(v1 + (bias ? to_f(bias[gn + 1]) : 0.f)));
          }
        }
      }
    }
  }
  if (split && tile_count) {
    __shared__ int last;
    __threadfence();  // this block's sums are in L2 before its count is
    __syncthreads();
    if (tid == 0) {
      int* cnt = tile_count + blockIdx.y * gridDim.x + blockIdx.x;
      last = atomicAdd(cnt, 1) == static_cast<int>(gridDim.z) - 1;
      if (last) *cnt = 0;  // every block of the tile has counted: ready for the next launch
    }
    __syncthreads();
    if (last) {
      __threadfence();
      // The tile's sums in batches, each batch's loads all issued before its stores (one trip to L2
      // a batch), then zeroed for the next launch, finished and stored.
      if constexpr (ALIGNED && BM * BN % (4 * THREADS) == 0) {
        constexpr int kQuads = BM * BN / 4 / THREADS, kBatch = kQuads < 8 ? kQuads : 8;  // 4 columns a quad
        static_assert(kQuads % kBatch == 0, "whole batches");
#pragma unroll
        for (int b0 = 0; b0 < kQuads; b0 += kBatch) {
          float4 v[kBatch];
          bool in[kBatch];
#pragma unroll
          for (int q = 0; q < kBatch; ++q) {
            const int e = 4 * (tid + (b0 + q) * THREADS), gm = m0 + e / BN, gn = n0 + e % BN;
            in[q] = gm < M && gn < N;  // N a multiple of 8: the quad is whole
            if (in[q]) v[q] = __ldcg(reinterpret_cast<const float4*>(split_acc + static_cast<std::size_t>(gm) * ald + gn));
          }
#pragma unroll
          for (int q = 0; q < kBatch; ++q) {
            if (!in[q]) continue;
            const int e = 4 * (tid + (b0 + q) * THREADS), gm = m0 + e / BN, gn = n0 + e % BN;
            __stcg(reinterpret_cast<float4*>(split_acc + static_cast<std::size_t>(gm) * ald + gn), make_float4(0.f, 0.f, 0.f, 0.f));
            float x[4] = {v[q].x, v[q].y, v[q].z, v[q].w};
#pragma unroll
            for (int i = 0; i < 4; ++i) x[i] = act<A>(x[i] + (bias ? to_f(bias[gn + i]) : 0.f));
            unsigned* c = reinterpret_cast<unsigned*>(C + static_cast<std::size_t>(gm) * ldc + gn);
            c[0] = pack2<T>(x[0], x[1]);
            c[1] = pack2<T>(x[2], x[3]);
          }
        }
      } else {
        constexpr int kItems = (BM * BN + THREADS - 1) / THREADS, kBatch = kItems < 16 ? kItems : 16;
        static_assert(kItems % kBatch == 0, "whole batches");
#pragma unroll
        for (int b0 = 0; b0 < kItems; b0 += kBatch) {
          float v[kBatch];
#pragma unroll
          for (int q = 0; q < kBatch; ++q) {
            const int e = tid + (b0 + q) * THREADS, gm = m0 + e / BN, gn = n0 + e % BN;
            if (e < BM * BN && gm < M && gn < N) v[q] = __ldcg(split_acc + static_cast<std::size_t>(gm) * ald + gn);
          }
#pragma unroll
          for (int q = 0; q < kBatch; ++q) {
            const int e = tid + (b0 + q) * THREADS, gm = m0 + e / BN, gn = n0 + e % BN;
            if (e >= BM * BN || gm >= M || gn >= N) continue;
            __stcg(split_acc + static_cast<std::size_t>(gm) * ald + gn, 0.f);
            C[static_cast<std::size_t>(gm) * ldc + gn] = from_f<T>(act<A>(v[q] + (bias ? to_f(bias[gn]) : 0.f)));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace bwprof
#endif  // BWPROF_CUDA
