// Round 9 of the Q4_0 GEMV study (docs/notes/gemv.md): a timeline of the whole ring kernel with its
// math, kept in history only. The library's ring (records, lean decode, one tile a block; X in shared
// memory by cp.async, or in registers with its chunk) copied with globaltimer stamps a warp, kept in
// shared memory and written out at the end: its start, X there, each chunk's start (its data there: the
// timer read is predicated on the data), its loop's end (its math done), the block's end. Options: X
// first by warp 0 on an mbarrier (XF 3), X by plain loads asked for before the weights and stored to
// shared memory after them (XF 4: .nc, XF 5: coherent), X in registers asked for before the weights (XO), the quants
// refilled right after their decode, before the mma (ER). Each kernel runs 15 times stamped and 15 times
// plain (its event time), after bwprof's flush and spin; medians over the launches of each quantile over
// the warps. Every kernel's output is compared with the library kernel's. ringD: X by a warp of its own.
// Build (from the repository root):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -DBWPROF_WITH_GPU -I cpp/src -I kernels \
//        -I cpp/include --expt-relaxed-constexpr benchmarks/experiments/q4_round9_timeline.cu -o tl
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cstring>

#include "common/gpu_runtime.hpp"
#include "common/gpu_wgmma.hpp"
#include "q4_0/mma_sm80.hpp"

using namespace bwprof::gpu;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

constexpr int kStamps = 24;  // start, X ready, block end, then (start, end) of up to 10 chunks, spare
__device__ unsigned long long* g_tl;

__device__ __forceinline__ unsigned long long gt() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
// The timer read only once `d` is there (a predicate computed from it guards the read).
__device__ __forceinline__ unsigned long long gt_after(unsigned d) {
  unsigned long long t = 0;
  asm volatile("{.reg .pred p; setp.ne.u32 p, %1, 0x9e3779b9; @p mov.u64 %0, %%globaltimer;}" : "+l"(t) : "r"(d) : "memory");
  return t;
}
__device__ __forceinline__ unsigned long long gt_afterf(float d) {
  unsigned long long t = 0;
  asm volatile("{.reg .pred p; setp.ne.f32 p, %1, 0f4E9E3779; @p mov.u64 %0, %%globaltimer;}" : "+l"(t) : "f"(d) : "memory");
  return t;
}


__device__ __forceinline__ void load_coh_if(uint4& r, const void* p, bool pred) {
  asm volatile("{.reg .pred p; setp.ne.b32 p, %4, 0;\n @p ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
               : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w) : "r"(static_cast<int>(pred)), "l"(p) : "memory");
}
__device__ __forceinline__ void load_coh_if(uint2& r, const void* p, bool pred) {
  asm volatile("{.reg .pred p; setp.ne.b32 p, %2, 0;\n @p ld.global.L1::no_allocate.v2.u32 {%0,%1}, [%3];}\n"
               : "+r"(r.x), "+r"(r.y) : "r"(static_cast<int>(pred)), "l"(p) : "memory");
}

// XR: X in registers with its chunk (ringx) instead of shared memory; PROBE: loads alone; TL: stamps.
template <int WARPS, int U, bool XR, bool PROBE, bool TL, int XF = 0, bool XO = false, bool ER = false>
__global__ void __launch_bounds__(WARPS * 32) ringT(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                  __half* __restrict__ y, int M, int N, int K) {
  extern __shared__ uint4 xs[];
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile0 = blockIdx.x;
  __shared__ unsigned long long stamps[TL ? WARPS * kStamps : 1];
  unsigned long long* st_out = stamps + (TL ? warp * kStamps : 0);
  const bool w0 = TL && lane == 0;
  if (w0) st_out[0] = gt();
  const int nc = nch;
  const uint4* qt = q + tile0 * nch * 36 + lane;
  const uint2* st = reinterpret_cast<const uint2*>(q + 32) + tile0 * nch * 72 + g;
  const bool has_x = g < M;
  uint4 qv[U], xr[XR ? U : 1][2];
  uint2 sv[U];
  __shared__ __align__(8) unsigned long long xbar_s;
  const unsigned xbar = smem_u32(&xbar_s);
  if (XF == 3) {  // X first by warp 0 alone, tracked by an mbarrier; the other warps' weights at once
    if (threadIdx.x == 0) {
      mbar_init(xbar, 32);
      mbar_init_fence();
    }
    __syncthreads();
    if (warp == 0) {
      for (int m = 0; m < M; ++m)
        for (int v = lane; v < kv; v += 32) cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
      mbar_arrive_cp_async(xbar);
    }
  }
  const __half* xg = x + static_cast<std::size_t>(has_x ? g : 0) * K + 8 * t;
  uint4 xa[4];  // XF 4: this thread's vectors of X, loaded before the weights, stored after them
  if ((XF == 4 || XF == 5) && M > 0) {  // its own block, so that ptxas keeps these loads ahead of the weights
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int i = threadIdx.x + j * WARPS * 32;
      xa[j] = make_uint4(0, 0, 0, 0);
      if (XF == 5) load_coh_if(xa[j], x + 8 * static_cast<std::size_t>(i < M * kv ? i : 0), i < M * kv);
      else load_cached_if(xa[j], x + 8 * static_cast<std::size_t>(i < M * kv ? i : 0), i < M * kv);
    }
  }
  if (XR && XO) {  // the first round's X before its weights: X retires first
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      q4_load_x(xr[u], xg, c, nb, has_x && c < nc);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS;
    if (XF == 5) {
      load_coh_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nc);
      load_coh_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nc);
    } else {
      load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nc);
      load_stream_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nc);
    }
  }
  if (XR && XO) {
  } else if (XR) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      q4_load_x(xr[u], xg, c, nb, has_x && c < nc);
    }
  } else if (XF == 3) {
    mbar_wait(xbar, 0);
  } else if (XF == 4 || XF == 5) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int i = threadIdx.x + j * WARPS * 32;
      if (i < M * kv) xs[(i / kv) * (kv + 4) + i % kv] = xa[j];
    }
    __syncthreads();
  } else {
    for (int m = 0; m < M; ++m)
      for (int v = threadIdx.x; v < kv; v += WARPS * 32)
        cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
  }
  const uint4* xsg = xs + (has_x ? g : 0) * (kv + 4) + t;
  if (w0) st_out[1] = XR ? gt_after(xr[0][0].x | 1u) : gt_after(xsg[0].x | 1u);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  int k = 0;
  for (int c0 = warp; c0 < nc; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nc) break;
      const int cn = c + U * WARPS;
      if (w0 && k < 10) st_out[3 + 2 * k] = gt_after(qv[u].x ^ qv[u].w ^ sv[u].y);
      uint4 xv[2];
      if (XR) {
        xv[0] = xr[u][0], xv[1] = xr[u][1];
      } else {
#pragma unroll
        for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * c + b < nb ? xsg[(2 * c + b) * 4] : make_uint4(0, 0, 0, 0);
      }
      if (ER && !PROBE) {  // decode, refill the quants at once, then the mma
        unsigned a[4][4];
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) q4_frag_decode<true>(wq[i], a[i]);
        load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, cn < nc);
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const unsigned bf[2] = {i == 0 ? xv[b].x : xv[b].z, i == 0 ? xv[b].y : xv[b].w};
            mma_16816(cf, a[2 * b + i], bf);
          }
          unsigned sw = b == 0 ? sv[u].x : sv[u].y;
          const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
          acc[0] += d.x * cf[0];
          acc[1] += d.x * cf[1];
          acc[2] += d.y * cf[2];
          acc[3] += d.y * cf[3];
        }
        ++k;
        if (XR) q4_load_x(xr[u], xg, cn, nb, has_x && cn < nc);
        load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, cn < nc);
        continue;
      }
      if (PROBE) {
        const unsigned h = qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sv[u].x ^ sv[u].y ^ xv[0].x ^ xv[0].y ^ xv[0].z ^
                           xv[0].w ^ xv[1].x ^ xv[1].y ^ xv[1].z ^ xv[1].w;
        acc[0] += __uint_as_float(h & 0x007fffffu);
      } else {
        q4_frag_chunk<true>(qv[u], sv[u], xv, acc);
      }
      ++k;
      const bool next = cn < nc;
      if (XR) q4_load_x(xr[u], xg, cn, nb, has_x && next);
      load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, next);
    }
  }
  if (w0) st_out[4 + 2 * 9] = gt_afterf(acc[0] + acc[3]);  // the loop's end: its math done
  q4_tile_store<WARPS>(part, acc, tile0, M, N, y);
  if (w0) st_out[2] = gt();
  if (w0) st_out[23] = k;
  if (TL) {
    __syncwarp();
    unsigned long long* out = g_tl + (static_cast<std::size_t>(blockIdx.x) * WARPS + warp) * kStamps;
    if (lane < kStamps) out[lane] = st_out[lane];
  }
}

template <int WARPS, int U, bool XR, bool PROBE, bool TL, int XF = 0, bool XO = false, bool ER = false>
void launchT(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  const int smem = XR ? 0 : (int)q4_x_smem_bytes(M, K);
  ringT<WARPS, U, XR, PROBE, TL, XF, XO, ER><<<(N + 15) / 16, WARPS * 32, smem, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}

// X by a warp of its own (warp WARPS), which asks for nothing else: its cp.async copies of X arrive on an
// mbarrier that the WARPS compute warps wait on before their first mma.
template <int WARPS, int U, bool TL, bool ER = false>
__global__ void __launch_bounds__((WARPS + 1) * 32) ringD(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                        __half* __restrict__ y, int M, int N, int K) {
  extern __shared__ uint4 xs[];
  __shared__ float4 part[WARPS * 32];
  __shared__ unsigned long long stamps[TL ? WARPS * kStamps : 1];
  __shared__ __align__(8) unsigned long long xbar_s;
  const unsigned xbar = smem_u32(&xbar_s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8, nc = nch;
  const std::size_t tile0 = blockIdx.x;
  if (threadIdx.x == 0) {
    mbar_init(xbar, 32);
    mbar_init_fence();
  }
  __syncthreads();
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  if (warp == WARPS) {
    for (int m = 0; m < M; ++m)
      for (int v = lane; v < kv; v += 32) cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    mbar_arrive_cp_async(xbar);
  } else {
    unsigned long long* st_out = stamps + (TL ? warp * kStamps : 0);
    const bool w0 = TL && lane == 0;
    if (w0) st_out[0] = gt();
    const uint4* qt = q + tile0 * nch * 36 + lane;
    const uint2* st = reinterpret_cast<const uint2*>(q + 32) + tile0 * nch * 72 + g;
    const bool has_x = g < M;
    uint4 qv[U];
    uint2 sv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nc);
      load_stream_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nc);
    }
    mbar_wait(xbar, 0);
    const uint4* xsg = xs + (has_x ? g : 0) * (kv + 4) + t;
    if (w0) st_out[1] = gt_after(xsg[0].x | 1u);
    int k = 0;
    for (int c0 = warp; c0 < nc; c0 += WARPS * U) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int c = c0 + u * WARPS;
        if (c >= nc) break;
        const int cn = c + U * WARPS;
        if (w0 && k < 10) st_out[3 + 2 * k] = gt_after(qv[u].x ^ qv[u].w ^ sv[u].y);
        ++k;
        uint4 xv[2];
#pragma unroll
        for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * c + b < nb ? xsg[(2 * c + b) * 4] : make_uint4(0, 0, 0, 0);
        if (ER) {
          unsigned a[4][4];
          const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
          for (int i = 0; i < 4; ++i) q4_frag_decode<true>(wq[i], a[i]);
          load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, cn < nc);
#pragma unroll
          for (int b = 0; b < 2; ++b) {
            float cf[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int i = 0; i < 2; ++i) {
              const unsigned bf[2] = {i == 0 ? xv[b].x : xv[b].z, i == 0 ? xv[b].y : xv[b].w};
              mma_16816(cf, a[2 * b + i], bf);
            }
            unsigned sw = b == 0 ? sv[u].x : sv[u].y;
            const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
            acc[0] += d.x * cf[0];
            acc[1] += d.x * cf[1];
            acc[2] += d.y * cf[2];
            acc[3] += d.y * cf[3];
          }
          load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, cn < nc);
          continue;
        }
        q4_frag_chunk<true>(qv[u], sv[u], xv, acc);
        const bool next = cn < nc;
        load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, next);
        load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, next);
      }
    }
    if (w0) st_out[4 + 2 * 9] = gt_afterf(acc[0] + acc[3]);
    if (w0) st_out[23] = k;
    part[threadIdx.x] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    const int ln = threadIdx.x / 4, j = threadIdx.x % 4;
    const float* pf = reinterpret_cast<const float*>(part);
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sum += pf[w * 128 + threadIdx.x];
    const int row = (ln >> 2) + 8 * (j >> 1), m = 2 * (ln & 3) + (j & 1);
    const std::size_t n = tile0 * 16 + row;
    if (m < M && n < static_cast<std::size_t>(N)) y[static_cast<std::size_t>(m) * N + n] = __float2half_rn(sum);
  }
  if (TL && warp < WARPS) {
    if (lane == 0) stamps[warp * kStamps + 2] = gt();
    __syncwarp();
    unsigned long long* out = g_tl + (static_cast<std::size_t>(blockIdx.x) * WARPS + warp) * kStamps;
    if (lane < kStamps) out[lane] = stamps[warp * kStamps + lane];
  }
}
template <int WARPS, int U, bool TL, bool ER = false>
void launchD(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  ringD<WARPS, U, TL, ER><<<(N + 15) / 16, (WARPS + 1) * 32, (int)q4_x_smem_bytes(M, K), s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}

__global__ void flush_read(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * (std::size_t)blockDim.x) {
    const uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void spin(long long cycles) { const long long t0 = clock64(); while (clock64() - t0 < cycles) {} }

struct Ctx { void* scrub; void* clean; std::size_t fb; int sms; cudaStream_t s; cudaEvent_t e0, e1; unsigned* sink; };
void prep(Ctx& c) {
  CK(cudaMemsetAsync(c.scrub, 0x5a, c.fb, c.s));
  flush_read<<<c.sms * 8, 256, 0, c.s>>>((const uint4*)c.clean, c.fb / 16, c.sink);
  spin<<<c.sms, 32, 0, c.s>>>(40000);
}

static double q(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

int main() {
  Ctx c;
  CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  c.sms = pr.multiProcessorCount;
  c.fb = std::max<std::size_t>(2 * (std::size_t)pr.l2CacheSize, 32u << 20) / 16 * 16;
  CK(cudaMalloc(&c.scrub, c.fb)); CK(cudaMalloc(&c.clean, c.fb)); CK(cudaMemset(c.clean, 0, c.fb));
  CK(cudaMalloc(&c.sink, 64));
  CK(cudaEventCreate(&c.e0)); CK(cudaEventCreate(&c.e1));
  printf("device %s, %d SMs\n", pr.name, c.sms);
  const int K = 4096;
  std::mt19937 rng(7);
  for (int N : {4096, 14336}) {
    const int tiles = (N + 15) / 16, nch = K / 64;
    const std::size_t rb = (std::size_t)tiles * nch * 576;
    std::vector<unsigned char> w18((std::size_t)N * (K / 32) * 18), h(rb);
    for (auto& b : w18) b = rng() & 0xff;
    for (std::size_t bk = 0; bk < (std::size_t)N * (K / 32); ++bk) { unsigned short d = 0x1c00 + (rng() & 0x3ff); memcpy(&w18[bk * 18], &d, 2); }
    q4_frag_pack(w18.data(), N, K, 0, tiles, h.data(), h.data() + 512, kQ4RecordBytes, kQ4RecordBytes);
    std::vector<__half> hx(K);
    for (int i = 0; i < K; ++i) hx[i] = __float2half((rng() % 2001) / 1000.f - 1.f);
    uint4* qd; __half *x, *y; unsigned long long* tl;
    CK(cudaMalloc(&qd, rb)); CK(cudaMemcpy(qd, h.data(), rb, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&x, K * 2)); CK(cudaMemcpy(x, hx.data(), K * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&y, (std::size_t)N * 2));
    const std::size_t nst = (std::size_t)tiles * 16 * kStamps;
    CK(cudaMalloc(&tl, nst * 8));
    CK(cudaMemcpyToSymbol(g_tl, &tl, sizeof tl));
    struct V { const char* name; int warps; void (*f)(const uint4*, const __half*, __half*, int, int, int, cudaStream_t); void (*plain)(const uint4*, const __half*, __half*, int, int, int, cudaStream_t); };
    const V vs[] = {
        {"ringx8x4 (library at 4096)", 8, launchT<8, 4, true, false, true>, launchT<8, 4, true, false, false>},
        {"ring8x4 XS (library at 14336)", 8, launchT<8, 4, false, false, true>, launchT<8, 4, false, false, false>},
        {"ring8x4 X by its own warp", 8, launchD<8, 4, true>, launchD<8, 4, false>},
        {"ring8x8 X by its own warp", 8, launchD<8, 8, true>, launchD<8, 8, false>},
        {"ring16x2 X by its own warp", 16, launchD<16, 2, true>, launchD<16, 2, false>},
        {"ring16x4 X by its own warp", 16, launchD<16, 4, true>, launchD<16, 4, false>},
        {"ring8x6 X by its own warp", 8, launchD<8, 6, true>, launchD<8, 6, false>},
        {"ring8x4 X own warp, early refill", 8, launchD<8, 4, true, true>, launchD<8, 4, false, true>},
        {"ring8x8 X own warp, early refill", 8, launchD<8, 8, true, true>, launchD<8, 8, false, true>},
    };
    std::vector<__half> yref(N), ygot(N);
    bwprof_q4_0_matmul_ring<8, 4, false, 1, kQ4Records | kQ4Lop3><<<tiles, 256, 0, c.s>>>(qd, nullptr, x, y, 1, N, K);
    CK(cudaStreamSynchronize(c.s));
    CK(cudaMemcpy(yref.data(), y, N * 2, cudaMemcpyDeviceToHost));
    for (const V& v : vs) {
      CK(cudaMemset(y, 0, N * 2));
      v.plain(qd, x, y, 1, N, K, c.s);
      CK(cudaStreamSynchronize(c.s));
      CK(cudaMemcpy(ygot.data(), y, N * 2, cudaMemcpyDeviceToHost));
      double md = 0, mr = 0;
      for (int i = 0; i < N; ++i) { md = std::max(md, (double)fabsf(__half2float(ygot[i]) - __half2float(yref[i]))); mr = std::max(mr, (double)fabsf(__half2float(yref[i]))); }
      if (strstr(v.name, "probe") == nullptr) printf("check N=%d %s: max|diff| against the library %.3g (max|y| %.3g)%s\n", N, v.name, md, mr, md > 4e-3 * mr ? " MISMATCH" : "");
    }
    for (const V& v : vs) {
      std::vector<float> ev_t, ev_p;
      // per launch statistics, medians over launches
      std::vector<std::vector<double>> S(24);
      const int L = 15;
      for (int l = 0; l < L; ++l) {
        std::vector<unsigned long long> hs(nst);
        for (int pass = 0; pass < 2; ++pass) {  // pass 0: stamped, pass 1: plain (events only)
          if (pass == 0) CK(cudaMemsetAsync(tl, 0, nst * 8, c.s));
          prep(c);
          CK(cudaEventRecord(c.e0, c.s));
          (pass == 0 ? v.f : v.plain)(qd, x, y, 1, N, K, c.s);
          CK(cudaEventRecord(c.e1, c.s));
          CK(cudaEventSynchronize(c.e1));
          float ms; CK(cudaEventElapsedTime(&ms, c.e0, c.e1));
          (pass == 0 ? ev_t : ev_p).push_back(ms * 1e3f);
          if (pass == 0) CK(cudaMemcpy(hs.data(), tl, nst * 8, cudaMemcpyDeviceToHost));
        }
        const int nw = tiles * v.warps;
        unsigned long long t0 = ~0ull;
        for (int w = 0; w < nw; ++w) t0 = std::min(t0, hs[w * kStamps]);
        std::vector<double> wstart, xr, cs[10], lend, bend;
        for (int w = 0; w < nw; ++w) {
          const unsigned long long* st2 = &hs[w * kStamps];
          const int kc = static_cast<int>(std::min<unsigned long long>(st2[23], 10));
          auto us = [&](unsigned long long a) { return (double)(a - t0) * 1e-3; };
          wstart.push_back(us(st2[0]));
          xr.push_back(us(st2[1]));
          for (int i = 0; i < kc; ++i) cs[i].push_back(us(st2[3 + 2 * i]));
          lend.push_back(us(st2[22]));
          bend.push_back(us(st2[2]));
        }
        int i = 0;
        auto push = [&](double val) { S[i++].push_back(val); };
        push(q(wstart, 0.5)); push(q(wstart, 1.0)); push(q(xr, 0.5)); push(q(xr, 1.0));
        for (int j = 0; j < 8; ++j) { push(q(cs[j], 0.5)); push(q(cs[j], 1.0)); }
        push(q(lend, 0.5)); push(q(lend, 1.0)); push(q(bend, 0.5)); push(q(bend, 1.0));
      }
      auto med = [&](int i) { return q(S[i], 0.5); };
      printf("N=%5d %-30s events stamped %.2f plain %.2f\n   warp start p50/max %.2f/%.2f  X ready %.2f/%.2f\n   chunk starts p50/max:", N, v.name,
             q(std::vector<double>(ev_t.begin(), ev_t.end()), 0.5), q(std::vector<double>(ev_p.begin(), ev_p.end()), 0.5), med(0), med(1), med(2), med(3));
      for (int j = 0; j < 8; ++j) if (med(4 + 2 * j) > 0) printf(" %.2f/%.2f", med(4 + 2 * j), med(5 + 2 * j));
      printf("\n   loop end %.2f/%.2f  block end %.2f/%.2f\n", med(20), med(21), med(22), med(23));
    }
    CK(cudaFree(qd)); CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(tl));
  }
  return 0;
}
