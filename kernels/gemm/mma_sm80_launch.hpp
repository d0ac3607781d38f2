// The mma.sync GEMM's launch of one tile (mma_sm80.hpp), included by the files that instantiate it
// (mma_sm80_<type>_<tile>.hip), in CUDA builds.
#pragma once
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/mma_sm80.hpp"
#include "gemm/mma_sm80_kernel.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {
namespace {

template <class T, int BM, int BN, int WM, int WN, int ST, int BK, int AL>
Resources mma_go(const gemm::MmaArgs& a, Act act, hipStream_t st, bool launch) {
  using Cfg = MmaConfig<BM, BN, WM, WN, ST, BK, AL>;
  static_assert(Cfg::kSmemBytes == gemm::mma_smem_bytes(gemm::MmaTileShape{BM, BN, WM, WN, ST}, AL) && BK == gemm::kMmaStepK,
                "choice.hpp's shared memory of a tile (mma_plan's fit) is the kernel's");
  return gemm::with_act(act, [&](auto ac) {
    auto* fn = &bwprof_gemm_mma<T, BM, BN, WM, WN, ST, BK, AL, decltype(ac)::value>;
    if (!launch) {
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                           Cfg::kSmemBytes));
      return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
    }
    const dim3 grid(static_cast<unsigned>((a.N + BN - 1) / BN), static_cast<unsigned>((a.M + BM - 1) / BM),
                    static_cast<unsigned>(a.splits));
    fn<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(static_cast<const T*>(a.A), static_cast<const T*>(a.B),
                                                     static_cast<const T*>(a.bias), static_cast<T*>(a.C), a.acc, a.counts,
                                                     int(a.M), int(a.N), int(a.K), int(a.lda), int(a.ldb), int(a.ldc),
                                                     a.split_len, 1);  // add4: the partial sums four columns a request
    BWPROF_CHECK_LAUNCH("bwprof_gemm_mma");
    return Resources{};
  });
}

template <class T, int BM, int BN, int WM, int WN, int ST, int BK>
Resources mma_launch(const gemm::MmaArgs& a, int load, Act act, hipStream_t st, bool launch) {
  switch (load) {
    case kLoadAsync: return mma_go<T, BM, BN, WM, WN, ST, BK, kLoadAsync>(a, act, st, launch);
    case kLoadRealign: return mma_go<T, BM, BN, WM, WN, ST, BK, kLoadRealign>(a, act, st, launch);
    default: return mma_go<T, BM, BN, WM, WN, ST, BK, kLoadRegs>(a, act, st, launch);
  }
}

}  // namespace
}  // namespace bwprof
#endif  // BWPROF_CUDA
