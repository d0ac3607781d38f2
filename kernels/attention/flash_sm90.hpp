// The Hopper prefill kernel's pieces besides the kernel itself (flash_sm90.hip includes this, alone):
// its shared-memory plan (the rings of Q slots and K/V stages), launch arguments, tile arithmetic and
// the online softmax on wgmma's score registers.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cmath>
#include <cstddef>

#include "common/gpu_common.hpp"
#include "common/gpu_wgmma_attn.hpp"
#include "attention/tile_order.hpp"

namespace bwprof {
namespace attention {
namespace sm90 {

using namespace gpu;

// Up to this many K/V stages and Q slots; the shared memory besides the rings (alignment, barriers
// (full/empty and vfull/vempty a stage, qfull/qempty a slot), the tile of each Q slot, the producer's next tile (2
// slots)); an H100 block's most shared memory (227 KB).
constexpr int kSm90MaxRing = 4;
constexpr int kSm90ExtraBytes = 1024 + 8 * 6 * kSm90MaxRing + 16 + 16;
constexpr int kSm90SmemMax = 232448;
// Paged: two key tiles' K/V buffer rows (an int a key) that the cp.async loader reads the block table
// into, after the tile slots. O stored by the copy engine (o_tma): a tile's O (128 rows, as wide as a
// Q slot) after the V stages.
inline int sm90_smem_bytes(int dp, int bc, int stages, int qslots, bool paged, bool o_tma = false) {
  return (qslots + (o_tma ? 1 : 0)) * 128 * dp * 2 + 2 * stages * bc * dp * 2 + kSm90ExtraBytes + (paged ? 8 * bc : 0);
}

// DP: the head dim as shared memory holds it (64, 128 or 256; 80 and 96 in 128). BC: keys per tile
// (128; 64 at head dim 256). The K/V stages and Q slots of the rings are runtime
// parameters (Sm90Args::stages, qslots: up to kMaxRing each, as many as fit shared memory).
template <int DP, int BC>
struct Sm90Cfg {
  static constexpr int kBr = 128;                  // 2 consumer warpgroups x 64 rows
  static constexpr int kBc = BC;
  static constexpr int kQBytes = kBr * DP * 2;
  static constexpr int kKvBytes = kBc * DP * 2;    // K or V, one stage (a multiple of 1 KB: BC is of 8 rows)
  static constexpr int kThreads = 384;
  static constexpr int kMaxRing = kSm90MaxRing;
  static_assert(kKvBytes % 1024 == 0 && kBc % 16 == 0, "key tile");
};

// A ring's slot and the parity of its current use, advanced one use at a time (no division by the
// runtime ring size in the loops).
// `wrapped`: every slot used once already (a slot's earlier use must be released before the next).
struct Sm90Ring {
  int slot = 0, phase = 0;
  bool wrapped = false;
  __device__ void next(int n) {
    if (++slot == n) slot = 0, phase ^= 1, wrapped = true;
  }
};

struct Sm90Args {
  void* O;
  const void *K, *V;     // paged with pages the copy engine cannot take: read by the producer's threads (cp.async)
  const int* table;      // paged: [batch, blocks_per_seq]
  int* counter;          // [0]: tiles handed out past the grid's first; [1]: blocks finished
  int heads, kv_heads, seq_q, seq_kv, D, group;
  int block_size, blocks_per_seq;
  int row_tiles, tiles;  // row tiles of a head; tiles in all
  float scale_log2;
  bool causal;
  bool store16;          // O stored 16 bytes a thread (quad shuffles), 32 columns at a time
  bool page_tma;         // paged: K/V pages read by the copy engine (pages of 8k rows dividing the key tile)
  int stages, qslots;    // K/V stages, Q slots (each 1 .. kMaxRing; stages >= 2)
  int head_chunk = 1;    // the tiles' order: chunks of this many heads (tile_order.hpp)
  int bh_total = 1;      // batch x query heads
};

#if defined(BWPROF_WGMMA_DEVICE)
__device__ __forceinline__ float sm90_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#endif

// f over t[0 .. N) as a balanced tree (log2 N deep instead of a chain of N).
template <int N, class F>
__device__ __forceinline__ float sm90_tree(const float* t, F f) {
  if constexpr (N == 1)
    return t[0];
  else
    return f(sm90_tree<N / 2>(t, f), sm90_tree<N - N / 2>(t + N / 2, f));
}

// Pins registers in place around asynchronous wgmma (no read or write of them moves across).
template <int N>
__device__ __forceinline__ void fence_regs(float* r) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// A tile's head (b * heads + h), first row and key tiles; the same on every role. The producer finds the
// head and row tile r (counted from the last) of its next tile in the order (tile_order.hpp) and hands the
// consumers bh * row_tiles + r. With the order's divisions on the consumers' path too, H200, one call, 3
// passes: B16 H64/8 S128 causal D64 +7 %, D128 +6 %; D256 B2 H16/4 S4096 +3 %; with (bh << bits) | r, the
// consumers' machine code was scheduled anew and the D256 kernel was 3.7-6.5 % slower (the order aside).
struct Sm90Tile {
  int bh, q0, ntiles;
  __device__ Sm90Tile(const Sm90Args& a, int bh_, int r, int br, int bc) : bh(bh_) {
    q0 = (a.row_tiles - 1 - r) * br;
    ntiles = row_key_tiles(q0, br, bc, a.seq_q, a.seq_kv, a.causal);
  }
};

// Scores of one key tile (registers sc[4i + 2rr + e]: row r0 + 8rr, key kt0 + 8i + 2tq + e) to
// probabilities: the mask, the running max m and sum l of each of the thread's two rows; corr
// receives the factor the rows' earlier sums and outputs take.
// LAZY: m is a reference the row's maximum may pass by up to kSm90LazyLog2 in the exponent (scores
// then up to 2^8 before the division by the sum, exact as any reference is); it moves, and corr is
// other than 1, only when the maximum passes it by more. So after a row's first tiles the output's
// rescale is mostly skipped (the consumers' rescale in flash_sm90.hip, by a warp vote).
constexpr float kSm90LazyLog2 = 8.f;
template <int BC, bool LAZY = false>
__device__ __forceinline__ void sm90_softmax(float* sc, float* m, float* l, float* corr, int kt0, int r0, int tq,
                                             bool edge, const Sm90Args& a) {
#if defined(BWPROF_WGMMA_DEVICE)
  const int shift = a.seq_kv - a.seq_q;
  if (edge) {
#pragma unroll
    for (int i = 0; i < BC / 8; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = kt0 + 8 * i + 2 * tq + (e & 1);
        if (j >= a.seq_kv || (a.causal && j > r0 + 8 * (e >> 1) + shift)) sc[4 * i + e] = -INFINITY;
      }
  }
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    // The row's maximum and sum as trees over the thread's scores of the row (32 at key tiles of
    // 128), not chains: the softmax is latency-bound (two consumer warps a scheduler), and 16
    // dependent maxima and 16 dependent adds in a row were its longest wait (H200, bf16 B2 H16/4
    // S4096 D64: 339.6 -> 308.2 us).
    float tr[BC / 8];
#pragma unroll
    for (int i = 0; i < BC / 8; ++i) tr[i] = fmaxf(sc[4 * i + 2 * rr], sc[4 * i + 2 * rr + 1]);
    float mx = fmaxf(m[rr], sm90_tree<BC / 8>(tr, [](float x, float y) { return fmaxf(x, y); }));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    if constexpr (LAZY) {
      const bool keep = m[rr] != -INFINITY && (mx - m[rr]) * a.scale_log2 <= kSm90LazyLog2;
      if (keep) mx = m[rr];
    }
    const float use = mx == -INFINITY ? 0.f : mx * a.scale_log2;  // no visible key yet: stays empty
    corr[rr] = m[rr] == -INFINITY ? 0.f : sm90_exp2(m[rr] * a.scale_log2 - use);
    m[rr] = mx;
#pragma unroll
    for (int i = 0; i < BC / 8; ++i) {
      sc[4 * i + 2 * rr] = sm90_exp2(fmaf(sc[4 * i + 2 * rr], a.scale_log2, -use));
      sc[4 * i + 2 * rr + 1] = sm90_exp2(fmaf(sc[4 * i + 2 * rr + 1], a.scale_log2, -use));
    }
#pragma unroll
    for (int i = 0; i < BC / 8; ++i) tr[i] = sc[4 * i + 2 * rr] + sc[4 * i + 2 * rr + 1];
    const float sum = sm90_tree<BC / 8>(tr, [](float x, float y) { return x + y; });
    l[rr] = l[rr] * corr[rr] + sum;  // this thread's share; the quad is summed at the end
  }
#endif
}

// Paged K/V by cp.async: the producer's 128 threads copy a key tile of K and V (stage buffers ks, vs)
// row by row, rows[r] the buffer row of the tile's key r, 16 bytes a thread (CPR threads a row,
// coalesced), into the copy engine's 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8) of
// its 128-byte line, 64 columns a box). Columns past the head are not written (nothing reads them).
// ZFILL: the tile ends past the sequence, whose rows become zeros (the tile's keys are kt * BC + r);
// whole tiles copy without the zero-fill operand. A row's address is one multiply-add: size_t
// arithmetic made each copy pair a chain of ten dependent instructions, and the producer's issue of a
// stage is on the consumers' path. rows[] holds a thread's keys (rsub, rsub + RPI, ...) side by side,
// read 16 bytes at a time (key r of the tile at sm90_row_slot(r); the table starts 224 bytes past a
// 1 KB boundary). H200, bf16 B1 H32/8 S4096 D128 causal, pages of 16: 382 -> 343 us with the
// multiply-add, -> 301 with the 16-byte table reads and pages of 2^n keys by shift.
template <int DP, int BC>
__device__ __forceinline__ int sm90_row_slot(int r) {
  constexpr int RPI = 128 / (DP / 8), ITER = BC / RPI;
  return (r % RPI) * ITER + r / RPI;
}
// base + row * row_bytes (a wide multiply-add in PTX). With V's row at K's plus the buffers' distance,
// a row's pair of addresses takes 5 instructions instead of 6 (ptxas still splits the multiply-add); H200,
// A/B in one call: -1 % at pages of 16, head dim 128, +2-3 % at 64 and 96 (the copies are not the
// producer's limit).
__device__ __forceinline__ const char* sm90_row_addr(unsigned row, unsigned row_bytes, const char* base) {
  unsigned long long r = 0;
#if defined(BWPROF_WGMMA_DEVICE)
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(row), "r"(row_bytes), "l"(base));
#endif
  return reinterpret_cast<const char*>(r);
}
template <class T, int DP, int BC, bool ZFILL>
__device__ __forceinline__ void sm90_copy_rows(unsigned ks, unsigned vs, const int* rows, int t, int kt,
                                               const Sm90Args& a) {
#if defined(BWPROF_WGMMA_DEVICE)
  constexpr int CPR = DP / 8, RPI = 128 / CPR, ITER = BC / RPI;
  static_assert(ITER % 4 == 0, "a thread's rows in 16-byte loads");
  const int chunk = t % CPR, rsub = t / CPR;
  if (chunk * 8 >= a.D) return;
  const unsigned dst0 = (chunk / 8) * BC * 128 + rsub * 128, row_bytes = 2u * a.D;
  const char* kc = static_cast<const char*>(a.K) + 16 * chunk;
  const long long kv_gap = static_cast<const char*>(a.V) - static_cast<const char*>(a.K);  // V's row from K's
  int mine[ITER];
#pragma unroll
  for (int q = 0; q < ITER / 4; ++q) {
    const int4 v = reinterpret_cast<const int4*>(rows + rsub * ITER)[q];
    mine[4 * q] = v.x, mine[4 * q + 1] = v.y, mine[4 * q + 2] = v.z, mine[4 * q + 3] = v.w;
  }
#pragma unroll
  for (int r = 0; r < ITER; ++r) {
    const int row = rsub + RPI * r;
    const char* k = sm90_row_addr(mine[r], row_bytes, kc);
    const char* v = k + kv_gap;
    const unsigned dst = dst0 + RPI * r * 128 + (((chunk % 8) ^ (row % 8)) << 4);
    if constexpr (ZFILL) {
      const int bytes = kt * BC + row < a.seq_kv ? 16 : 0;
      cp_async16_to(ks + dst, k, bytes);
      cp_async16_to(vs + dst, v, bytes);
    } else {
      cp_async16_to(ks + dst, k);
      cp_async16_to(vs + dst, v);
    }
  }
#endif
}

// O from registers (o[4x + 2rr + e]: row r0 + 8 rr, column 8x + 2tq + e; lsum: the thread's share of
// each row's sum), normalized. Stored 16 bytes a thread: for each 32 columns (x = 4g .. 4g + 3) the
// quad's 4 x 4 pairs are transposed by shuffles, so that thread tq holds columns 32g + 8tq .. + 7 (a
// warp's store: 8 rows of 64 whole bytes, not of 16 bytes in 4-byte pieces); the pairs past the last
// 32 (head dim 80) 4 bytes a thread. Off (head dims 64 and 128):
// every pair 4 bytes a thread.
template <class T, int DN>
__device__ __forceinline__ void sm90_store_o_regs(const float* o, const float* lsum, int r0, int bh, int l,
                                                  const Sm90Args& a) {
#if defined(BWPROF_WGMMA_DEVICE)
  const int tq = l % 4;
  constexpr int G32 = DN / 32;
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float lt = lsum[rr];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const int row = r0 + 8 * rr;
    const bool in = row < a.seq_q;
    const float inv = lt > 0.f ? 1.f / lt : 0.f;
    T* out = static_cast<T*>(a.O) + (static_cast<std::size_t>(bh) * a.seq_q + (in ? row : 0)) * a.D;
    if (a.store16) {
#pragma unroll
      for (int g = 0; g < G32; ++g) {
        unsigned v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = pack2<T>(o[4 * (4 * g + j) + 2 * rr] * inv, o[4 * (4 * g + j) + 2 * rr + 1] * inv);
        // The quad's 4 x 4 transpose (thread t's pair j to thread j's slot t) in two butterfly
        // rounds: with the thread at lane distance 1, then 2, swap the two pairs whose index differs
        // from the thread's in that bit. Four shuffles and fixed slots (a select by the lane's bit):
        // the rotation by runtime pair indices it replaces spent more instructions on selects and
        // branches than on anything else in the store (H200 ncu, D256 short rows: a third of the
        // kernel's samples in the store).
#pragma unroll
        for (int bit = 1; bit <= 2; bit *= 2) {
          const bool hi = (tq & bit) != 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (j & bit) continue;  // the pair (j, j + bit), one of which this thread gives away
            const unsigned send = hi ? v[j] : v[j + bit];
            const unsigned got = __shfl_xor_sync(0xffffffffu, send, bit);
            v[j] = hi ? got : v[j];
            v[j + bit] = hi ? v[j + bit] : got;
          }
        }
        const int col = 32 * g + 8 * tq;
        if (in && col < a.D) *reinterpret_cast<uint4*>(out + col) = make_uint4(v[0], v[1], v[2], v[3]);
      }
    }
#pragma unroll
    for (int x = 0; x < DN / 8; ++x) {
      const int col = 8 * x + 2 * tq;
      if ((!a.store16 || x >= 4 * G32) && in && col < a.D)
        *reinterpret_cast<unsigned*>(out + col) = pack2<T>(o[4 * x + 2 * rr] * inv, o[4 * x + 2 * rr + 1] * inv);
    }
  }
#endif
}

// O_TMA: a consumer warpgroup's 64 rows (o[4x + 2rr + e]: row 16 w4 + l/4 + 8 rr of the warpgroup,
// column 8x + 2tq + e; lsum: the thread's share of each row's sum) normalized into its half of the O
// buffer `ob`, laid out as a Q slot's (64-column boxes of 128-byte rows, 128-byte swizzled: pair x
// of row lr at 16-byte chunk (x % 8) ^ (lr % 8), so a warp's 8 rows fall on 8 chunks, no bank
// conflict); then thread 0 of the warpgroup asks the copy engine to store it (a box of 64 columns x
// 64 rows of head bh from row row_first; the map clips rows past seq_q and columns past D) and the
// warpgroup goes on at once. Before the buffer is written again that thread waits until the copy
// engine has read the previous tile's (the warpgroup held at named barrier 2 + c meanwhile).
template <class T, int DP, int DN>
__device__ __forceinline__ void sm90_store_o_tma(const float* o, const float* lsum, unsigned ob, const CUtensorMap* tmO,
                                                 int row_first, int bh, int c, int t, const Sm90Args& a) {
#if defined(BWPROF_WGMMA_DEVICE)
  const int w4 = t / 32, l = t % 32, tq = l % 4;
  if (t == 0) bulk_wait_read();
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float lt = lsum[rr];
    lt += __shfl_xor_sync(0xffffffffu, lt, 1);
    lt += __shfl_xor_sync(0xffffffffu, lt, 2);
    const float inv = lt > 0.f ? 1.f / lt : 0.f;
    const int lr = 16 * w4 + l / 4 + 8 * rr;
#pragma unroll
    for (int x = 0; x < DN / 8; ++x) {
      const unsigned at = ob + (x / 8) * 64 * 128 + lr * 128 + (((x % 8) ^ (lr % 8)) * 16) + 4 * tq;
      const unsigned v = pack2<T>(o[4 * x + 2 * rr] * inv, o[4 * x + 2 * rr + 1] * inv);
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at), "r"(v) : "memory");
    }
  }
  fence_async_shared();  // the plain stores, before the copy engine reads them
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
  if (t == 0 && row_first < a.seq_q) {
#pragma unroll
    for (int j = 0; j < DP / 64; ++j)
      if (64 * j < a.D) tma_store_3d(tmO, ob + j * 64 * 128, 64 * j, row_first, bh);
    bulk_commit();
  }
#endif
}

}  // namespace sm90
}  // namespace attention
}  // namespace bwprof
#endif  // BWPROF_CUDA
