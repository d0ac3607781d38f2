// The vector-compute roof: independent FMA chains on every SM: FFMA for FP32, DFMA for FP64, packed
// HFMA2 for FP16 and packed BF16 FMAs (sm_80+) for BF16, each FMA of a pair counted (4 FLOPs).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bwprof/bf16.hpp"
#include "bwprof/error.hpp"
#include "bwprof/half.hpp"
#include "common/gpu_common.hpp"
#include "common/reference.hpp"
#include "fma_chain/fma_chain.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

constexpr int kBlock = 256;
constexpr int kChains = 8;
constexpr int kIters = 4096;

// Every thread runs kChains independent chains v = v * a + b from v = threadIdx.x / 1024 + c (exact
// in float before its conversion, so the host's gold starts where the GPU does). Block 0 stores
// each thread's sum for the check; the other blocks keep theirs alive with a comparison that never
// holds (chains whose result no block uses could be dropped).
__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_fp32(float* out, float a, float b) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = threadIdx.x * (1.0f / 1024) + c;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (blockIdx.x == 0 || s == 1234.5f) out[threadIdx.x] = s;
}

__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_fp64(float* out, double a, double b) {
  double acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = threadIdx.x * (1.0 / 1024) + c;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], a, b);
  }
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (blockIdx.x == 0 || s == 1234.5) out[threadIdx.x] = static_cast<float>(s);
}

// Packed pairs (__half2; __nv_bfloat162 on sm_80+). The multiplier and addend come in as kernel
// parameters of the pair type, each in a register of its own: ptxas then splits the HFMA2s of the
// independent chains between the FMA pipe and the one beside the tensor cores (HFMA2.MMA) on sm_80
// and sm_90, which is what doubles FP16 over FP32 there. Both halves of one register (the pair
// built in the kernel from floats) or compile-time constants keep them on one pipe: half the rate.
template <class T2>
__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_x2(float* out, T2 a, T2 b);

template <>
__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_x2<__half2>(float* out, __half2 a, __half2 b) {
  __half2 acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = __float2half2_rn(threadIdx.x * (1.0f / 1024) + c);
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hfma2(acc[c], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += __low2float(acc[c]) + __high2float(acc[c]);
  if (blockIdx.x == 0 || s == 1234.5f) out[threadIdx.x] = s;
}

#if defined(BWPROF_CUDA)
// sm_80 and later (below it CUDA has no BF16 FMA; the factory refuses such a GPU, so the body is empty).
template <>
__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_x2<__nv_bfloat162>(float* out, __nv_bfloat162 a,
                                                                              __nv_bfloat162 b) {
#if __CUDA_ARCH__ >= 800
  __nv_bfloat162 acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = __float2bfloat162_rn(threadIdx.x * (1.0f / 1024) + c);
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hfma2(acc[c], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += __low2float(acc[c]) + __high2float(acc[c]);
  if (blockIdx.x == 0 || s == 1234.5f) out[threadIdx.x] = s;
#endif
}
#endif

static_assert(kBlock == kFmaGpuThreads && kChains == kFmaGpuChains && kIters == kFmaGpuIters,
              "fma_chain.hpp's traffic constants are this kernel's");


// A pair of one 16-bit value on the host, as the kernel parameter takes it (low half first).
template <class T2>
T2 pair_of(std::uint16_t bits) {
  static_assert(sizeof(T2) == 4, "a packed pair is two 16-bit halves");
  const std::uint32_t both = bits | (static_cast<std::uint32_t>(bits) << 16);
  T2 out;
  std::memcpy(&out, &both, sizeof out);
  return out;
}

class FmaChainGpu final : public KernelInstance {
 public:
  FmaChainGpu(GpuBackend& g, const Problem& p)
      : g_(g), arithmetic_(fma_chain_arithmetic(p)), k_(fma_chain_constants(arithmetic_)),
        out_(kBlock * sizeof(float), "FMA chain sink") {
    if (p.i("workers") > 2147483647) throw InvalidArgument("workers: at most 2^31-1 blocks on the GPU");
    if (p.i("iters") % kIters)
      throw InvalidArgument("iters: a multiple of " + std::to_string(kIters) + " on the GPU (the kernel's steps)");
#if defined(BWPROF_CUDA)
    const bool bf16_ok = has_packed_bf16(g.info());
#else
    const bool bf16_ok = false;
#endif
    if (arithmetic_ == "bf16" && !bf16_ok)
      throw InvalidArgument("dtype: bf16 FMA chains need packed BF16 FMAs on the vector units (NVIDIA sm_80 or "
                            "later); " + g.info().id + " (" + g.info().arch + ") has none");
    blocks_ = static_cast<int>(p.i("workers"));
    launches_ = p.i("iters") / kIters;
  }
  // v = v * a + b (fma_chain_constants) from starts in [0, 8): no value leaves (0, 8), so no
  // denormal or infinity slows a unit, and a and b come at run time: nothing can be folded away.
  void launch() override {
    const float kA = k_.a, kB = k_.b;
    float* out = out_.get<float>();
    for (std::int64_t i = 0; i < launches_; ++i) {
      if (arithmetic_ == "fp64") {
        bwprof_fma_chain_fp64<<<blocks_, kBlock, 0, g_.stream()>>>(out, static_cast<double>(kA), static_cast<double>(kB));
      } else if (arithmetic_ == "fp16") {
        bwprof_fma_chain_x2<__half2><<<blocks_, kBlock, 0, g_.stream()>>>(
            out, pair_of<__half2>(float_to_half(kA)), pair_of<__half2>(float_to_half(kB)));
#if defined(BWPROF_CUDA)
      } else if (arithmetic_ == "bf16") {
        bwprof_fma_chain_x2<__nv_bfloat162><<<blocks_, kBlock, 0, g_.stream()>>>(
            out, pair_of<__nv_bfloat162>(static_cast<std::uint16_t>(float_to_bf16(kA))),
            pair_of<__nv_bfloat162>(static_cast<std::uint16_t>(float_to_bf16(kB))));
#endif
      } else {
        bwprof_fma_chain_fp32<<<blocks_, kBlock, 0, g_.stream()>>>(out, kA, kB);
      }
    }
    BWPROF_CHECK_LAUNCH("bwprof_fma_chain");
  }
  // Block 0's sums of the last launch (each launch starts its chains afresh) against the host's
  // emulation of the same chains in the same arithmetic, rounding for rounding.
  Check check() override {
    g_.synchronize();
    std::vector<float> got(kBlock);
    out_.download(got.data(), got.size() * sizeof(float));
    ErrorMeter m;
    for (int t = 0; t < kBlock; ++t) m.add(got[t], fma_chain_gpu_gold(arithmetic_, t, k_.a, k_.b));
    return m.finish(arithmetic_ == "fp16" ? 4e-3 : arithmetic_ == "bf16" ? 1.6e-2 : 1e-5);
  }
  Resources resources() const override {
    if (arithmetic_ == "fp64") return kernel_resources(bwprof_fma_chain_fp64, kBlock);
    if (arithmetic_ == "fp16") return kernel_resources(bwprof_fma_chain_x2<__half2>, kBlock);
#if defined(BWPROF_CUDA)
    if (arithmetic_ == "bf16") return kernel_resources(bwprof_fma_chain_x2<__nv_bfloat162>, kBlock);
#endif
    return kernel_resources(bwprof_fma_chain_fp32, kBlock);
  }

 private:
  GpuBackend& g_;
  std::string arithmetic_;  // "fp32", "fp64", "fp16", "bf16"
  FmaConstants k_;
  DeviceBuffer out_;
  int blocks_ = 1;
  std::int64_t launches_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_fma_chain_gpu(Backend& b, const Problem& p) {
  return std::make_unique<FmaChainGpu>(as_gpu(b), p);
}

}  // namespace bwprof
