// The vector compute roof: independent FMA chains on every core (CPU: FP32, FP64) or SM (GPU: FFMA
// for FP32, packed HFMA2 for FP16, packed BF16 FMAs for BF16 on sm_80+, DFMA for FP64). The peaks
// policy measures it (Ceiling::kVector); it moves no data.
#pragma once
#include <memory>
#include <string>

#include "bwprof/arch.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {

// Chains and threads per worker: a CPU worker is a thread with 128 chains, a GPU worker a block
// of 256 threads with 8 chains each.
constexpr int kFmaCpuChains = 128;
constexpr int kFmaGpuThreads = 256, kFmaGpuChains = 8;
// The GPU kernel's steps per chain (a compile-time trip count): `iters` is a multiple of it.
constexpr int kFmaGpuIters = 4096;

// Whether the GPU has packed BF16 FMAs on its vector units (NVIDIA sm_80 and later).
inline bool has_packed_bf16(const DeviceInfo& info) {
  return info.vendor == "nvidia" && sm_version(info.arch) >= 80;
}

// The arithmetic a problem's chains run in: "fp64" (math=fp64), else the dtype's on the GPU
// ("fp32", "fp16", "bf16") and FP32 on the CPU (its chains are FP32 only).
std::string fma_chain_arithmetic(const Problem& p);

// The chains' v = v * a + b: `a` close to 1, so that one launch's 4096 steps take each chain most of
// the way from its start to b / (1 - a) and the check sees every step; BF16 (8 significant bits)
// rounds 0.999 to 1, which would stall its chains at their start, so they take 0.99.
struct FmaConstants {
  float a, b;
};
inline FmaConstants fma_chain_constants(const std::string& arithmetic) {
  return arithmetic == "bf16" ? FmaConstants{0.99f, 1e-3f} : FmaConstants{0.999f, 1e-4f};
}

// The sum of GPU thread `thread`'s chains after one launch (kFmaGpuIters steps of v = v * a + b
// from v = thread / 1024 + c, chain c), as the kernel adds them up (FP32; FP64 for "fp64"), each
// step emulated in the chain's own arithmetic with its one rounding (round to nearest even).
double fma_chain_gpu_gold(const std::string& arithmetic, int thread, float a, float b);

// The variants' factories (family.cpp registers them; the GPU one exists in GPU builds only).
std::unique_ptr<KernelInstance> make_fma_chain_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_fma_chain_gpu(Backend&, const Problem&);

}  // namespace bwprof
