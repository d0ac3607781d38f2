// Round 9 of the Q4_0 GEMV study (docs/notes/gemv.md), a standalone harness, kept in history only.
// Times variants of the ring kernel as bwprof does (flush written, clean buffer read, ~20 us spin,
// events; median of 30, passes alternating) beside the library's own kernels launched directly, and
// checks each against a float64 reference from llama.cpp-layout blocks packed by q4_frag_pack:
//   ringh: X replicated `rep` ways (block b reads copy b % rep), chunk order rotated per block, X by a
//          bulk copy (one per block, or multicast over a cluster of CL blocks), probes of the loads;
//   ringF: the library's X-in-shared-memory ring copied, with a decode without its subtraction
//          (FOLD 1: offsets from a per-block table of X's block sums; 2: from a second mma by a
//          constant A; 3: none, a wrong result, the bound) and X by one warp first (XF 1, 3) or last (2);
//   ringO: every chunk of a warp in flight by cp.async, one mbarrier a chunk, computed as they land.
// Build (CUDA 12.4+, from the repository root):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -DBWPROF_WITH_GPU -I cpp/src -I kernels \
//        -I cpp/include --expt-relaxed-constexpr -include functional benchmarks/experiments/q4_round9.cu -o q4_round9
// Run: ./q4_round9 [passes]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/gpu_runtime.hpp"
#include "common/gpu_wgmma.hpp"
#include "q4_0/mma_sm80.hpp"

using namespace bwprof::gpu;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("ERR %s line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ void bulk_x(unsigned dst, const void* src, unsigned bytes, unsigned bar, int cl) {
  if (cl > 1) {
    const unsigned short mask = static_cast<unsigned short>((1u << cl) - 1);
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "h"(mask)
        : "memory");
  } else {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
  }
}

// XM: 0 X in registers with its chunk (ringx), 1 X in shared memory by cp.async (ring), 2 X by a bulk
// copy (multicast over the cluster when CL > 1), 3 no X (probe only). PROBE: loads alone.
template <int WARPS, int U, int XM, bool PROBE, int CL>
__global__ void __launch_bounds__(WARPS * 32) ringh(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                  __half* __restrict__ y, int N, int K, int rep, int rot) {
  extern __shared__ __align__(128) uint4 xs[];
  __shared__ float4 part[WARPS * 32];
  __shared__ __align__(8) unsigned long long bar;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile = blockIdx.x;
  x += static_cast<std::size_t>(blockIdx.x % rep) * K;
  const int off = rot ? static_cast<int>((blockIdx.x * static_cast<unsigned>(rot)) % nch) : 0;
  auto phys = [&](int c) { const int p = c + off; return p >= nch ? p - nch : p; };
  const uint4* qt = q + tile * nch * 36 + lane;
  const uint2* st = reinterpret_cast<const uint2*>(q + 32) + tile * nch * 72 + g;
  const bool has_x = g == 0;
  uint4 qv[U], xr[XM == 0 ? U : 1][2];
  uint2 sv[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS, pc = phys(c);
    load_stream_if(qv[u], qt + static_cast<std::size_t>(pc) * 36, c < nch);
    load_stream_if(sv[u], st + static_cast<std::size_t>(pc) * 72, c < nch);
  }
  const __half* xg = x + 8 * t;
  if (XM == 0) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = warp + u * WARPS;
      q4_load_x(xr[u], xg, phys(c), nb, has_x && c < nch);
    }
  } else if (XM == 1) {
    for (int v = threadIdx.x; v < kv; v += WARPS * 32) {
      int vv = v + off * 8;
      vv = vv >= kv ? vv - kv : vv;
      cp_async16(xs + vv, x + 8 * vv, true);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
  } else if (XM == 2) {
    const unsigned b = smem_u32(&bar);
    if (threadIdx.x == 0) {
      mbar_init(b, 1);
      mbar_init_fence();
    }
    if (CL > 1) cluster_sync(); else __syncthreads();
    if (threadIdx.x == 0) {
      mbar_expect_tx(b, static_cast<unsigned>(K) * 2);
      const unsigned r = CL > 1 ? cluster_rank() : 0;
      const int slice = K / CL;
      bulk_x(smem_u32(xs) + r * slice * 2, x + r * slice, slice * 2, b, CL);
    }
    mbar_wait(b, 0);
  }
  const uint4* xsg = xs + t;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = warp; c0 < nch; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nch) break;
      const int cn = c + U * WARPS, ck = phys(c), pn = phys(cn < nch ? cn : 0);
      uint4 xv[2];
      if (XM == 1 || XM == 2) {
#pragma unroll
        for (int bb = 0; bb < 2; ++bb) xv[bb] = has_x && 2 * ck + bb < nb ? xsg[(2 * ck + bb) * 4] : make_uint4(0, 0, 0, 0);
      } else if (XM == 0) {
        xv[0] = xr[u][0], xv[1] = xr[u][1];
      } else {
        xv[0] = xv[1] = make_uint4(0, 0, 0, 0);
      }
      if (PROBE) {
        const unsigned h = qv[u].x ^ qv[u].y ^ qv[u].z ^ qv[u].w ^ sv[u].x ^ sv[u].y ^ xv[0].x ^ xv[0].y ^ xv[0].z ^
                           xv[0].w ^ xv[1].x ^ xv[1].y ^ xv[1].z ^ xv[1].w;
        acc[0] += __uint_as_float(h & 0x007fffffu);
      } else {
        q4_frag_chunk<true>(qv[u], sv[u], xv, acc);
      }
      const bool next = cn < nch;
      if (XM == 0) q4_load_x(xr[u], xg, pn, nb, has_x && next);
      load_stream_if(qv[u], qt + static_cast<std::size_t>(pn) * 36, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(pn) * 72, next);
    }
  }
  q4_tile_store<WARPS>(part, acc, tile, 1, N, y);
  if (XM == 2 && CL > 1) cluster_sync();  // no block leaves while a peer's copy may still write to it
}

template <int WARPS, int U, int XM, bool PROBE, int CL>
void launch(const uint4* q, const __half* x, __half* y, int N, int K, int rep, int rot, cudaStream_t s) {
  auto fn = ringh<WARPS, U, XM, PROBE, CL>;
  const int smem = (XM == 1 || XM == 2) ? K * 2 : 0;
  const int tiles = (N + 15) / 16;
  if (CL > 1) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(tiles);
    cfg.blockDim = dim3(WARPS * 32);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeClusterDimension;
    a[0].val.clusterDim.x = CL, a[0].val.clusterDim.y = 1, a[0].val.clusterDim.z = 1;
    cfg.attrs = a, cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, fn, q, x, y, N, K, rep, rot));
  } else {
    fn<<<tiles, WARPS * 32, smem, s>>>(q, x, y, N, K, rep, rot);
    CK(cudaGetLastError());
  }
}


// Coherent (not .nc) first-round loads: ptxas does not sink them below a block barrier.
__device__ __forceinline__ void load_coh_if(uint4& r, const void* p, bool pred) {
  asm volatile("{.reg .pred p; setp.ne.b32 p, %4, 0;\n @p ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%5];}\n"
               : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w) : "r"(static_cast<int>(pred)), "l"(p) : "memory");
}
__device__ __forceinline__ void load_coh_if(uint2& r, const void* p, bool pred) {
  asm volatile("{.reg .pred p; setp.ne.b32 p, %2, 0;\n @p ld.global.L1::no_allocate.v2.u32 {%0,%1}, [%3];}\n"
               : "+r"(r.x), "+r"(r.y) : "r"(static_cast<int>(pred)), "l"(p) : "memory");
}

// The library's ring kernel with X in shared memory (records, lean), TILES = 1, copied; FOLD: the
// decode without its subtraction (the mma gets 1024 + q and 1024 + 16 q), the offset taken out by
// starting each block's accumulator at -1032 S (rows g) and -1152 S (rows g + 8, which come out 16x),
// S the block's sum of X, from a table made once per block.
template <int WARPS, int U, int FOLD, bool TAB = (FOLD == 1), int XF = 0>
__global__ void __launch_bounds__(WARPS * 32) ringF(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                  __half* __restrict__ y, int M, int N, int K) {
  extern __shared__ uint4 xs[];
  __shared__ float4 part[WARPS * 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile0 = blockIdx.x;
  const int nc = nch;
  const uint4* qt = q + tile0 * nch * 36 + lane;
  const uint2* st = reinterpret_cast<const uint2*>(q + 32) + tile0 * nch * 72 + g;
  const bool has_x = g < M;
  uint4 qv[U];
  uint2 sv[U];
  __shared__ __align__(8) unsigned long long xbar_s;
  const unsigned xbar = smem_u32(&xbar_s);
  if (XF == 3) {
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
  if (XF == 1 && warp == 0) {  // X first, by warp 0 alone: the other warps' weights go out at once
    for (int m = 0; m < M; ++m)
      for (int v = lane; v < kv; v += 32) cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    cp_async_commit();
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int c = warp + u * WARPS;
    if (XF) {
      load_coh_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nc);
      load_coh_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nc);
    } else {
      load_stream_if(qv[u], qt + static_cast<std::size_t>(c) * 36, c < nc);
      load_stream_if(sv[u], st + static_cast<std::size_t>(c) * 72, c < nc);
    }
  }
  if (XF == 2 && warp == WARPS - 1) {  // X by the last warp alone, after its first round
    for (int m = 0; m < M; ++m)
      for (int v = lane; v < kv; v += 32) cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    cp_async_commit();
  }
  if (XF == 0) {
    for (int m = 0; m < M; ++m)
      for (int v = threadIdx.x; v < kv; v += WARPS * 32)
        cp_async16(xs + m * (kv + 4) + v, x + static_cast<std::size_t>(m) * K + 8 * v, true);
    cp_async_commit();
  }
  if (XF == 3) {
    mbar_wait(xbar, 0);
  } else {
    cp_async_wait<0>();
    __syncthreads();
  }
  float4* tab = reinterpret_cast<float4*>(xs + M * (kv + 4));  // [2 nch][4]
  if (TAB) {
    // items (blk, t, quarter): lanes 4 apart share (blk, t); each sums its quarter (8 k) of X rows 2t, 2t+1
    for (int i = threadIdx.x; i < 2 * nch * 16; i += WARPS * 32) {
      const int qq = i & 3, tt = (i >> 2) & 3, blk = i >> 4;
      float s0 = 0.f, s1 = 0.f;
      if (blk < nb) {
        if (2 * tt < M) {
          const uint4 v = xs[(2 * tt) * (kv + 4) + blk * 4 + qq];
          const unsigned w[4] = {v.x, v.y, v.z, v.w};
          float2 f[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) f[e] = __half22float2(*reinterpret_cast<const __half2*>(&w[e]));
          s0 = ((f[0].x + f[0].y) + (f[1].x + f[1].y)) + ((f[2].x + f[2].y) + (f[3].x + f[3].y));
        }
        if (2 * tt + 1 < M) {
          const uint4 v = xs[(2 * tt + 1) * (kv + 4) + blk * 4 + qq];
          const unsigned w[4] = {v.x, v.y, v.z, v.w};
          float2 f[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) f[e] = __half22float2(*reinterpret_cast<const __half2*>(&w[e]));
          s1 = ((f[0].x + f[0].y) + (f[1].x + f[1].y)) + ((f[2].x + f[2].y) + (f[3].x + f[3].y));
        }
      }
      s0 += __shfl_xor_sync(0xffffffffu, s0, 1);
      s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
      s0 += __shfl_xor_sync(0xffffffffu, s0, 2);
      s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
      if (qq == 0) tab[blk * 4 + tt] = make_float4(-1032.f * s0, -1032.f * s1, -1152.f * s0, -1152.f * s1);
    }
    __syncthreads();
  }
  const uint4* xsg = xs + (has_x ? g : 0) * (kv + 4) + t;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = warp; c0 < nc; c0 += WARPS * U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = c0 + u * WARPS;
      if (c >= nc) break;
      const int cn = c + U * WARPS, ck = c;
      uint4 xv[2];
#pragma unroll
      for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * ck + b < nb ? xsg[(2 * ck + b) * 4] : make_uint4(0, 0, 0, 0);
      if (FOLD) {
        const unsigned wq[4] = {qv[u].x, qv[u].y, qv[u].z, qv[u].w};
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          float cf[4] = {0.f, 0.f, 0.f, 0.f};
          if (FOLD == 1) {
            const float4 i4 = tab[(2 * ck + b) * 4 + t];
            cf[0] = i4.x, cf[1] = i4.y, cf[2] = i4.z, cf[3] = i4.w;
          }
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const unsigned w = wq[2 * b + i], w2 = w >> 8;
            unsigned a[4];
            a[0] = q4_and_or(w, 0x000F000Fu, 0x64006400u), a[1] = q4_and_or(w, 0x00F000F0u, 0x64006400u);
            a[2] = q4_and_or(w2, 0x000F000Fu, 0x64006400u), a[3] = q4_and_or(w2, 0x00F000F0u, 0x64006400u);
            const unsigned bf[2] = {i == 0 ? xv[b].x : xv[b].z, i == 0 ? xv[b].y : xv[b].w};
            mma_16816(cf, a, bf);
            if (FOLD == 2) {  // the offsets: -1032 (rows g) and -1152 (rows g + 8) times X
              const unsigned ac[4] = {0xE408E408u, 0xE480E480u, 0xE408E408u, 0xE480E480u};
              mma_16816(cf, ac, bf);
            }
          }
          unsigned sw = b == 0 ? sv[u].x : sv[u].y;
          const float2 d = __half22float2(*reinterpret_cast<const __half2*>(&sw));
          acc[0] += d.x * cf[0];
          acc[1] += d.x * cf[1];
          acc[2] += d.y * cf[2];
          acc[3] += d.y * cf[3];
        }
      } else {
        q4_frag_chunk<true>(qv[u], sv[u], xv, acc);
      }
      const bool next = cn < nc;
      load_stream_if(qv[u], qt + static_cast<std::size_t>(cn) * 36, next);
      load_stream_if(sv[u], st + static_cast<std::size_t>(cn) * 72, next);
    }
  }
  if (FOLD) acc[2] *= 0.0625f, acc[3] *= 0.0625f;
  q4_tile_store<WARPS>(part, acc, tile0, M, N, y);
}
template <int WARPS, int U, int FOLD, bool TAB = (FOLD == 1), int XF = 0>
void launchF(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  const int nch = K / 64;
  const int smem = (int)q4_x_smem_bytes(M, K) + (TAB ? 2 * nch * 4 * 16 : 0);
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(ringF<WARPS, U, FOLD, TAB, XF>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  ringF<WARPS, U, FOLD, TAB, XF><<<(N + 15) / 16, WARPS * 32, smem, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}

__device__ __forceinline__ bool mbar_test(unsigned bar, unsigned parity) {
  unsigned r;
  asm volatile("{.reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p;}"
               : "=r"(r) : "r"(bar), "r"(parity) : "memory");
  return r != 0;
}
// Every chunk of a warp in flight by cp.async into shared memory, each chunk loaded by its own lanes
// (32 / U of them) and tracked by its own mbarrier, so that the warp computes its chunks in the order
// they land. X (all of it) copied by warp 0 first, on its own mbarrier. XL: X by all warps? (no: warp 0)
template <int WARPS, int U>
__global__ void __launch_bounds__(WARPS * 32) ringO(const uint4* __restrict__ q, const __half* __restrict__ x,
                                                  __half* __restrict__ y, int M, int N, int K) {
  extern __shared__ uint4 dyn[];
  __shared__ float4 part[WARPS * 32];
  __shared__ __align__(8) unsigned long long bars[WARPS * U + 1];
  constexpr int LPC = 32 / U;  // lanes a chunk
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
  const int nb = K / 32, nch = (nb + 1) / 2, kv = K / 8;
  const std::size_t tile0 = blockIdx.x;
  uint4* xs = dyn;                                   // M rows of kv + 4 vectors
  uint4* buf = dyn + M * (kv + 4) + warp * U * 36;   // this warp's U chunk buffers
  const unsigned xbar = smem_u32(&bars[WARPS * U]);
  const unsigned wbar = smem_u32(&bars[warp * U]);
  if (threadIdx.x == 0) {
    for (int i = 0; i < WARPS * U; ++i) mbar_init(smem_u32(&bars[i]), LPC);
    mbar_init(xbar, 32);
    mbar_init_fence();
  }
  __syncthreads();
  const uint4* qt = q + tile0 * nch * 36;
  if (warp == 0) {
    for (int m = 0; m < M; ++m)
      for (int v = lane; v < kv; v += 32) cp_async16_to(smem_u32(xs + m * (kv + 4) + v), x + static_cast<std::size_t>(m) * K + 8 * v);
    mbar_arrive_cp_async(xbar);
  }
  const int mu = lane / LPC, mj = lane % LPC;  // this lane's chunk of the warp's U, and its place among its lanes
  auto issue = [&](int c0) {
    const int c = c0 + mu * WARPS;
    if (c < nch) {
      const uint4* src = qt + static_cast<std::size_t>(c) * 36;
      for (int v = mj; v < 36; v += LPC) cp_async16_to(smem_u32(buf + mu * 36 + v), src + v);
      mbar_arrive_cp_async(wbar + 8 * mu);
    }
  };
  issue(warp);
  mbar_wait(xbar, 0);
  const uint4* xsg = xs + (g < M ? g : 0) * (kv + 4) + t;
  const bool has_x = g < M;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  unsigned parity = 0;
  for (int c0 = warp; c0 < nch; c0 += WARPS * U, parity ^= 1) {
    unsigned pending = 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (c0 + u * WARPS < nch) pending |= 1u << u;
    while (pending) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (!(pending & (1u << u))) continue;
        if (!mbar_test(wbar + 8 * u, parity)) continue;
        pending &= ~(1u << u);
        const int ck = c0 + u * WARPS;
        const uint4 qv = buf[u * 36 + lane];
        const uint2 sv = reinterpret_cast<const uint2*>(buf + u * 36 + 32)[g];
        uint4 xv[2];
#pragma unroll
        for (int b = 0; b < 2; ++b) xv[b] = has_x && 2 * ck + b < nb ? xsg[(2 * ck + b) * 4] : make_uint4(0, 0, 0, 0);
        q4_frag_chunk<true>(qv, sv, xv, acc);
      }
    }
    __syncwarp();
    if (c0 + WARPS * U < nch) issue(c0 + WARPS * U);
  }
  q4_tile_store<WARPS>(part, acc, tile0, M, N, y);
}
template <int WARPS, int U>
void launchO(const uint4* q, const __half* x, __half* y, int M, int N, int K, cudaStream_t s) {
  const int smem = (int)q4_x_smem_bytes(M, K) + WARPS * U * 576;
  CK(cudaFuncSetAttribute(ringO<WARPS, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  ringO<WARPS, U><<<(N + 15) / 16, WARPS * 32, smem, s>>>(q, x, y, M, N, K);
  CK(cudaGetLastError());
}

__global__ void clean_read(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  const std::size_t i = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 2;
  unsigned acc = 0;
  if (i < n) { uint4 v; load_stream_if(v, p + i, true); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (i + 1 < n) { uint4 v; load_stream_if(v, p + i + 1, true); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void flush_read(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * (std::size_t)blockDim.x) {
    const uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) *sink = acc;
}
__global__ void spin(long long cycles) { const long long t0 = clock64(); while (clock64() - t0 < cycles) {} }

struct Ctx { void* scrub; void* clean; std::size_t fb; int sms; cudaStream_t s; cudaEvent_t e0, e1; unsigned* sink; };

template <class F>
double time_it(Ctx& c, F&& f, int reps = 30) {
  std::vector<float> v;
  for (int i = 0; i < reps; ++i) {
    CK(cudaMemsetAsync(c.scrub, 0x5a, c.fb, c.s));
    flush_read<<<c.sms * 8, 256, 0, c.s>>>((const uint4*)c.clean, c.fb / 16, c.sink);
    spin<<<c.sms, 32, 0, c.s>>>(40000);
    CK(cudaEventRecord(c.e0, c.s));
    f();
    CK(cudaEventRecord(c.e1, c.s));
    CK(cudaEventSynchronize(c.e1));
    float ms; CK(cudaEventElapsedTime(&ms, c.e0, c.e1)); v.push_back(ms * 1e3f);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  Ctx c;
  CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  c.sms = pr.multiProcessorCount;
  c.fb = std::max<std::size_t>(2 * (std::size_t)pr.l2CacheSize, 32u << 20) / 16 * 16;
  CK(cudaMalloc(&c.scrub, c.fb)); CK(cudaMalloc(&c.clean, c.fb)); CK(cudaMemset(c.clean, 0, c.fb));
  CK(cudaMalloc(&c.sink, 64));
  CK(cudaEventCreate(&c.e0)); CK(cudaEventCreate(&c.e1));
  printf("device %s, %d SMs, L2 %d\n", pr.name, c.sms, pr.l2CacheSize);
  const int K = 4096;
  const int shapes[] = {4096, 14336, 1024};
  const int passes = argc > 1 ? atoi(argv[1]) : 3;
  std::mt19937 rng(7);
  for (int N : shapes) {
    const int tiles = (N + 15) / 16, nch = K / 64;
    const std::size_t rb = (std::size_t)tiles * nch * 576;
    std::vector<unsigned char> w18((std::size_t)N * (K / 32) * 18), h(rb);
    for (std::size_t i = 0; i < w18.size(); ++i) w18[i] = rng() & 0xff;
    for (std::size_t bk = 0; bk < (std::size_t)N * (K / 32); ++bk) { unsigned short d = 0x1c00 + (rng() & 0x3ff); memcpy(&w18[bk * 18], &d, 2); }
    q4_frag_pack(w18.data(), N, K, 0, tiles, h.data(), h.data() + 512, kQ4RecordBytes, kQ4RecordBytes);
    std::vector<__half> hx((std::size_t)256 * K);
    for (int i = 0; i < K; ++i) hx[i] = __float2half((rng() % 2001) / 1000.f - 1.f);
    for (int r = 1; r < 256; ++r) std::copy(hx.begin(), hx.begin() + K, hx.begin() + (std::size_t)r * K);
    std::vector<double> gold(N);
    for (int n = 0; n < N; ++n) {
      double acc = 0;
      for (int bk = 0; bk < K / 32; ++bk) {
        const unsigned char* bp = &w18[((std::size_t)n * (K / 32) + bk) * 18];
        unsigned short dh; memcpy(&dh, bp, 2); __half_raw hr; hr.x = dh; const double d = __half2float(__half(hr));
        double s2 = 0;
        for (int e = 0; e < 32; ++e) { const int qq = e < 16 ? (bp[2 + e] & 15) : (bp[2 + e - 16] >> 4); s2 += (qq - 8) * (double)__half2float(hx[bk * 32 + e]); }
        acc += d * s2;
      }
      gold[n] = acc;
    }
    uint4* q; __half *x, *y; unsigned char* rd;
    CK(cudaMalloc(&q, rb)); CK(cudaMemcpy(q, h.data(), rb, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&x, hx.size() * 2)); CK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&y, (std::size_t)N * 2 * 8));
    CK(cudaMalloc(&rd, rb + K * 2));
    struct V { std::string name; bool full; std::function<void()> f; };
    std::vector<V> vs;
    auto S = c.s;
    const std::size_t rn = (rb + K * 2) / 16;
    vs.push_back({"clean read", false, [=] { clean_read<<<(unsigned)((rn + 511) / 512), 256, 0, S>>>((const uint4*)rd, rn, (unsigned*)rd); }});
#define ADD(NAME, FULL, W, UU, XM, PR, CL, REP, ROT) vs.push_back({NAME, FULL, [=] { launch<W, UU, XM, PR, CL>(q, x, y, N, K, REP, ROT, S); }})
    vs.push_back({"LIB ringx8x4rl", true, [=] { bwprof_q4_0_matmul_ring<8, 4, false, 1, kQ4Records | kQ4Lop3><<<(N + 15) / 16, 256, 0, S>>>(q, nullptr, x, y, 1, N, K); }});
    vs.push_back({"LIB ring8x4rl", true, [=] { bwprof_q4_0_matmul_ring<8, 4, true, 1, kQ4Records | kQ4Lop3><<<(N + 15) / 16, 256, (int)q4_x_smem_bytes(1, K), S>>>(q, nullptr, x, y, 1, N, K); }});
    vs.push_back({"copy ring8x4rl", true, [=] { launchF<8, 4, 0>(q, x, y, 1, N, K, S); }});
    vs.push_back({"copy ring16x2rl", true, [=] { launchF<16, 2, 0>(q, x, y, 1, N, K, S); }});
    // calls 1-2: X replicated, chunks rotated, X by bulk copy or cluster multicast (ringh)
    ADD("ringx8x4", true, 8, 4, 0, false, 1, 1, 0);
    ADD("ringx8x4 rep2", true, 8, 4, 0, false, 1, 2, 0);
    ADD("ringx8x4 rep4", true, 8, 4, 0, false, 1, 4, 0);
    ADD("ringx8x4 rep16", true, 8, 4, 0, false, 1, 16, 0);
    ADD("ringx8x4 rep256", true, 8, 4, 0, false, 1, 256, 0);
    ADD("ringx8x4 rot1", true, 8, 4, 0, false, 1, 1, 1);
    ADD("ringx8x4 rot8", true, 8, 4, 0, false, 1, 1, 8);
    ADD("ring8x4 XS", true, 8, 4, 1, false, 1, 1, 0);
    ADD("ring8x4 XS rep16", true, 8, 4, 1, false, 1, 16, 0);
    ADD("ring8x4 XS rot1", true, 8, 4, 1, false, 1, 1, 1);
    ADD("ring8x4 bulk CL1", true, 8, 4, 2, false, 1, 1, 0);
    ADD("ring8x4 bulk CL1 rep16", true, 8, 4, 2, false, 1, 16, 0);
    ADD("ring8x4 mcast CL2", true, 8, 4, 2, false, 2, 1, 0);
    ADD("ring8x4 mcast CL4", true, 8, 4, 2, false, 4, 1, 0);
    ADD("ring8x4 mcast CL8", true, 8, 4, 2, false, 8, 1, 0);
    ADD("ring16x2 mcast CL4", true, 16, 2, 2, false, 4, 1, 0);
    ADD("probe ringx8x4", false, 8, 4, 0, true, 1, 1, 0);
    ADD("probe ringx8x4 rep16", false, 8, 4, 0, true, 1, 16, 0);
    ADD("probe ringx8x4 rot1", false, 8, 4, 0, true, 1, 1, 1);
    ADD("probe no X", false, 8, 4, 3, true, 1, 1, 0);
    ADD("probe ring8x4 XS", false, 8, 4, 1, true, 1, 1, 0);
    ADD("probe ring8x4 XS rep16", false, 8, 4, 1, true, 1, 16, 0);
    ADD("probe mcast CL4", false, 8, 4, 2, true, 4, 1, 0);
    ADD("probe bulk CL1", false, 8, 4, 2, true, 1, 1, 0);
    // calls 3-5: the decode without its subtraction (ringF)
    vs.push_back({"FOLD(table) ring8x4rl", true, [=] { launchF<8, 4, 1>(q, x, y, 1, N, K, S); }});
    vs.push_back({"TABLE only ring8x4rl", true, [=] { launchF<8, 4, 0, true>(q, x, y, 1, N, K, S); }});
    vs.push_back({"ONES ring8x4rl", true, [=] { launchF<8, 4, 2>(q, x, y, 1, N, K, S); }});
    vs.push_back({"ONES ring16x2rl", true, [=] { launchF<16, 2, 2>(q, x, y, 1, N, K, S); }});
    vs.push_back({"ONES ring4x4rl", true, [=] { launchF<4, 4, 2>(q, x, y, 1, N, K, S); }});
    vs.push_back({"ONES ring8x2rl", true, [=] { launchF<8, 2, 2>(q, x, y, 1, N, K, S); }});
    vs.push_back({"NOCORR(wrong) ring8x4rl", false, [=] { launchF<8, 4, 3>(q, x, y, 1, N, K, S); }});
    vs.push_back({"NOCORR(wrong) ring16x2rl", false, [=] { launchF<16, 2, 3>(q, x, y, 1, N, K, S); }});
    // call 7: chunks computed in the order they land (ringO)
    vs.push_back({"OOO 8x8", true, [=] { launchO<8, 8>(q, x, y, 1, N, K, S); }});
    vs.push_back({"OOO 16x4", true, [=] { launchO<16, 4>(q, x, y, 1, N, K, S); }});
    vs.push_back({"OOO 8x4", true, [=] { launchO<8, 4>(q, x, y, 1, N, K, S); }});
    vs.push_back({"OOO 16x2", true, [=] { launchO<16, 2>(q, x, y, 1, N, K, S); }});
    vs.push_back({"OOO 4x8", true, [=] { launchO<4, 8>(q, x, y, 1, N, K, S); }});
    vs.push_back({"OOO 32x2", true, [=] { launchO<32, 2>(q, x, y, 1, N, K, S); }});
    // call 8: X by one warp (ringF XF)
    vs.push_back({"XW0 ring8x4rl", true, [=] { launchF<8, 4, 0, false, 1>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XW0 ring16x2rl", true, [=] { launchF<16, 2, 0, false, 1>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XW0 ring8x2rl", true, [=] { launchF<8, 2, 0, false, 1>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XW0 ring16x4rl", true, [=] { launchF<16, 4, 0, false, 1>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XMB ring8x4rl", true, [=] { launchF<8, 4, 0, false, 3>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XMB ring16x2rl", true, [=] { launchF<16, 2, 0, false, 3>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XMB ring8x2rl", true, [=] { launchF<8, 2, 0, false, 3>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XMB ring16x4rl", true, [=] { launchF<16, 4, 0, false, 3>(q, x, y, 1, N, K, S); }});
    vs.push_back({"XWlast ring8x4rl", true, [=] { launchF<8, 4, 0, false, 2>(q, x, y, 1, N, K, S); }});
    // correctness: every full variant against the first (same X in every copy)
    std::vector<__half> ref(N), got(N);
    for (auto& v : vs) {
      if (!v.full) continue;
      CK(cudaMemsetAsync(y, 0, N * 2, S)); v.f(); CK(cudaStreamSynchronize(S));
      CK(cudaMemcpy(got.data(), y, N * 2, cudaMemcpyDeviceToHost));
      if (&v == &vs[1]) ref = got;
      double md = 0, mr = 0;
      for (int i = 0; i < N; ++i) { md = std::max(md, (double)fabsf(__half2float(got[i]) - __half2float(ref[i]))); mr = std::max(mr, (double)fabsf(__half2float(ref[i]))); }
      double mg = 0, gm = 0;
      for (int i = 0; i < N; ++i) { mg = std::max(mg, fabs(__half2float(got[i]) - gold[i])); gm = std::max(gm, fabs(gold[i])); }
      printf("check N=%d %-24s vs LIB %.3g, vs gold %.3g (max|gold| %.3g)%s\n", N, v.name.c_str(), md, mg, gm, mg > 2e-3 * gm ? "  MISMATCH" : "");
    }
    std::vector<std::vector<double>> res(vs.size());
    for (int p = 0; p < passes; ++p)
      for (std::size_t i = 0; i < vs.size(); ++i) res[i].push_back(time_it(c, vs[i].f));
    for (std::size_t i = 0; i < vs.size(); ++i) {
      printf("N=%5d K=%d %-32s", N, K, vs[i].name.c_str());
      for (double d : res[i]) printf(" %6.2f", d);
      printf("\n");
    }
    CK(cudaFree(q)); CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(rd));
  }
  return 0;
}
