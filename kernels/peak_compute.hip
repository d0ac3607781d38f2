// The vector-compute roof: independent FMA chains on every SM (FFMA for FP32, packed HFMA2 for FP16).
#include <algorithm>
#include <vector>

#include "bwprof/runner.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"

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

class FmaChain final : public KernelInstance {
 public:
  FmaChain(GpuBackend& g, DType t) : g_(g), t_(t), out_(kBlock * sizeof(float), "FMA chain sink") {
    blocks_ = g.sm_count() * 8;
  }
  void launch() override {
    if (t_ == DType::kF32)
      bwprof_fma_chain_fp32<<<blocks_, kBlock, 0, g_.stream()>>>(out_.get<float>(), 0.999f, 1e-4f);
    else
      bwprof_fma_chain_fp16<<<blocks_, kBlock, 0, g_.stream()>>>(out_.get<float>(), 0.999f, 1e-4f);
    BWPROF_CHECK_LAUNCH("bwprof_fma_chain");
  }
  Check check() override { return Check{0, 0, true}; }
  double flops() const {
    const double per_fma = t_ == DType::kF32 ? 2.0 : 4.0;  // HFMA2 does two FMAs
    return double(blocks_) * kBlock * kIters * kChains * per_fma;
  }

 private:
  GpuBackend& g_;
  DType t_;
  DeviceBuffer out_;
  int blocks_ = 1;
};

}  // namespace

double gpu_fma_chain_gflops(Backend& b, DType dtype) {
  GpuBackend& g = as_gpu(b);
  FmaChain k(g, dtype);
  RunOptions opt;
  opt.cold = false;
  opt.warmup = 3;
  opt.min_repeats = 10;
  opt.min_time_s = 0.01;
  std::vector<double> t = run_repeats(g, k, opt);
  std::sort(t.begin(), t.end());
  return k.flops() / (t[t.size() / 2] * 1e-6) / 1e9;
}

}  // namespace bwprof
