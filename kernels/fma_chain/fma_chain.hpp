// The vector compute roof: independent FMA chains on every core (CPU, FP32) or SM (GPU: FFMA for
// FP32, packed HFMA2 for FP16). The peaks policy measures it (Ceiling::kVector); it moves no data.
#pragma once
#include <memory>

#include "bwprof/kernel.hpp"

namespace bwprof {

// Chains and threads per worker: a CPU worker is a thread with 128 chains, a GPU worker a block
// of 256 threads with 8 chains each.
constexpr int kFmaCpuChains = 128;
constexpr int kFmaGpuThreads = 256, kFmaGpuChains = 8;
// The GPU kernel's steps per chain (a compile-time trip count): `iters` is a multiple of it.
constexpr int kFmaGpuIters = 4096;

// The variants' factories (family.cpp registers them; the GPU one exists in GPU builds only).
std::unique_ptr<KernelInstance> make_fma_chain_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_fma_chain_gpu(Backend&, const Problem&);

}  // namespace bwprof
