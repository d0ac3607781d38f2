// The vector-compute roof: independent FMA chains on every SM (FFMA for FP32, packed HFMA2 for FP16).
#include <cstdint>
#include <string>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "fma_chain/fma_chain.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

constexpr int kBlock = 256;
constexpr int kChains = 8;
constexpr int kIters = 4096;

__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_fp32(float* out, float a, float b) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = threadIdx.x * 1e-3f + c;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (s == 1234.5f) out[threadIdx.x] = s;  // never true; keeps the chains alive
}

__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_fp16(float* out, float a, float b) {
  __half2 acc[kChains];
  const __half2 ha = __float2half2_rn(a), hb = __float2half2_rn(b);
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = __float2half2_rn(threadIdx.x * 1e-3f + c);
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = __hfma2(acc[c], ha, hb);
  }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += __low2float(acc[c]) + __high2float(acc[c]);
  if (s == 1234.5f) out[threadIdx.x] = s;
}

__global__ void __launch_bounds__(kBlock) bwprof_fma_chain_fp64(float* out, double a, double b) {
  double acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = threadIdx.x * 1e-3 + c;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], a, b);
  }
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (s == 1234.5) out[threadIdx.x] = static_cast<float>(s);
}

static_assert(kBlock == kFmaGpuThreads && kChains == kFmaGpuChains && kIters == kFmaGpuIters,
              "fma_chain.hpp's traffic constants are this kernel's");

class FmaChainGpu final : public KernelInstance {
 public:
  FmaChainGpu(GpuBackend& g, const Problem& p)
      : g_(g), t_(p.dtype), fp64_(p.s("math") == "fp64"), out_(kBlock * sizeof(float), "FMA chain sink") {
    if (p.i("workers") > 2147483647) throw InvalidArgument("workers: at most 2^31-1 blocks on the GPU");
    if (p.i("iters") % kIters)
      throw InvalidArgument("iters: a multiple of " + std::to_string(kIters) + " on the GPU (the kernel's steps)");
    blocks_ = static_cast<int>(p.i("workers"));
    launches_ = p.i("iters") / kIters;
  }
  void launch() override {
    for (std::int64_t i = 0; i < launches_; ++i) {
      if (fp64_)
        bwprof_fma_chain_fp64<<<blocks_, kBlock, 0, g_.stream()>>>(out_.get<float>(), 0.999, 1e-4);
      else if (t_ == DType::kF32)
        bwprof_fma_chain_fp32<<<blocks_, kBlock, 0, g_.stream()>>>(out_.get<float>(), 0.999f, 1e-4f);
      else
        bwprof_fma_chain_fp16<<<blocks_, kBlock, 0, g_.stream()>>>(out_.get<float>(), 0.999f, 1e-4f);
    }
    BWPROF_CHECK_LAUNCH("bwprof_fma_chain");
  }
  // The chains store nothing (a store would cost the timed kernel), so there is no output to
  // compare; the CPU variant's output is checked.
  Check check() override { return Check{0, 0, true}; }
  Resources resources() const override {
    if (fp64_) return kernel_resources(bwprof_fma_chain_fp64, kBlock);
    return t_ == DType::kF32 ? kernel_resources(bwprof_fma_chain_fp32, kBlock)
                             : kernel_resources(bwprof_fma_chain_fp16, kBlock);
  }

 private:
  GpuBackend& g_;
  DType t_;
  bool fp64_;
  DeviceBuffer out_;
  int blocks_ = 1;
  std::int64_t launches_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_fma_chain_gpu(Backend& b, const Problem& p) {
  return std::make_unique<FmaChainGpu>(as_gpu(b), p);
}

}  // namespace bwprof
