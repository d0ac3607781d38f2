// The wgmma GEMM's launch (wgmma_sm90.hpp), included by the files that instantiate it
// (wgmma_sm90_<type>.hip), in CUDA builds.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <cstdint>

#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/wgmma_sm90.hpp"
#include "gemm/wgmma_sm90_kernel.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace {

template <class T, int CONS, int BN, int ST, int MC>
Resources wgmma_go(gemm::WgmmaArgs& a, Act act, hipStream_t st, bool launch) {
  using Cfg = WgCfg<CONS, BN, ST>;
  constexpr bool kBf16 = std::is_same<T, bf16>::value;
  return gemm::with_act(act, [&](auto ac) {
    auto* fn = &bwprof_gemm_wgmma<T, CONS, BN, ST, MC, decltype(ac)::value>;
    if (!launch) {
      a.tmA = b16_tensor_map(a.A, kBf16, a.M, a.K, a.lda, 64, Cfg::kBM);
      a.tmB = b16_tensor_map(a.B, kBf16, a.K, a.N, a.ldb, 64, 64 / MC);  // each block of a cluster brings 64 / MC rows
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes));
      return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
    }
    const unsigned m_tiles = static_cast<unsigned>((a.M + Cfg::kBM - 1) / Cfg::kBM);
    const dim3 grid(static_cast<unsigned>((a.N + BN - 1) / BN), (m_tiles + MC - 1) / MC * MC, static_cast<unsigned>(a.splits));
    const int c_pairs = a.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(a.C) % 4 == 0;
    hipLaunchConfig_t cfg{};
    cfg.gridDim = grid, cfg.blockDim = dim3(Cfg::kThreads), cfg.dynamicSmemBytes = Cfg::kSmemBytes, cfg.stream = st;
    hipLaunchAttribute attr[1];
    attr[0].id = hipLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1, attr[0].val.clusterDim.y = MC, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr, cfg.numAttrs = MC > 1 ? 1 : 0;
    BWPROF_GPU_CHECK(hipLaunchKernelEx(&cfg, fn, a.tmA, a.tmB, static_cast<const T*>(a.bias), static_cast<T*>(a.C),
                                       static_cast<float4*>(a.ws), a.counts, int(a.M), int(a.N), int(a.K), int(a.ldc),
                                       a.split_steps, c_pairs, int(a.slots)));
    BWPROF_CHECK_LAUNCH("bwprof_gemm_wgmma");
    return Resources{};
  });
}

template <class T, int MC>
Resources wgmma_tile(gemm::WgmmaArgs& a, int tile, Act act, hipStream_t st, bool launch) {
  switch (tile) {  // choice.hpp's kWgmmaTiles: 128x256, 128x128, 64x128, 64x64
    case 0: return wgmma_go<T, 2, 256, 4, MC>(a, act, st, launch);
    case 1: return wgmma_go<T, 2, 128, 6, MC>(a, act, st, launch);
    case 2: return wgmma_go<T, 1, 128, 8, MC>(a, act, st, launch);
    default: return wgmma_go<T, 1, 64, 8, MC>(a, act, st, launch);
  }
}

template <class T>
Resources wgmma_launch(gemm::WgmmaArgs& a, int tile, int cluster, Act act, hipStream_t st, bool launch) {
  return cluster > 1 ? wgmma_tile<T, 2>(a, tile, act, st, launch) : wgmma_tile<T, 1>(a, tile, act, st, launch);
}

}  // namespace
}  // namespace bwprof
#endif  // BWPROF_CUDA
