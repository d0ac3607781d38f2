// The GPU's cache levels: L2 (each block a different slice of the working set each pass), L1
// (each block re-reading its own small region) and shared memory / LDS (each block re-reading its
// own shared array). Every thread sums what it read and writes that once; the check recomputes
// the sums on the host. Each pass starts at an offset the compiler cannot see (`shift`), so no
// load is hoisted out of the pass loop; a shift of one block-width keeps every thread on its own
// elements, so the sums do not depend on it.
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "cache_bw/cache_bw.hpp"
#include "common/gpu_common.hpp"
#include "common/reference.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

__device__ __forceinline__ void add4(float4& a, const float4& v) { a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w; }

// L2: `slice` float4s per block; in pass p block b reads slice (b + p) % workers of x (and for
// rw writes it to the same slice of y).
template <bool RW>
__global__ void __launch_bounds__(kCacheThreads) bwprof_l2_bandwidth(const float4* __restrict__ x, float4* __restrict__ y,
                                                                    float* out, int slice, int workers, int passes) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int p = 0; p < passes; ++p) {
    const std::size_t base = static_cast<std::size_t>((blockIdx.x + p) % workers) * slice;
    for (int i = threadIdx.x; i < slice; i += kCacheThreads) {
      const float4 v = x[base + i];
      add4(acc, v);
      if (RW) y[base + i] = v;
    }
  }
  out[blockIdx.x * kCacheThreads + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// L1: each block's own `per` float4s (a power of two), every pass.
__global__ void __launch_bounds__(kCacheThreads) bwprof_l1_bandwidth(const float4* __restrict__ x, float* out, int per,
                                                                    int passes, int shift) {
  const float4* r = x + static_cast<std::size_t>(blockIdx.x) * per;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int p = 0; p < passes; ++p) {
    const int base = (p * shift) & (per - 1);
    for (int i = threadIdx.x; i < per; i += kCacheThreads) add4(acc, r[(i + base) & (per - 1)]);
  }
  out[blockIdx.x * kCacheThreads + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// Shared memory: the block's `per` float4s copied in once; each pass reads n of them (all, or
// for rw the first half, each value also stored into the second half).
template <bool RW>
__global__ void __launch_bounds__(kCacheThreads) bwprof_shared_bandwidth(const float4* __restrict__ x, float* out,
                                                                        int per, int passes, int shift) {
  extern __shared__ float4 sm[];
  const float4* r = x + static_cast<std::size_t>(blockIdx.x) * per;
  for (int i = threadIdx.x; i < per; i += kCacheThreads) sm[i] = r[i];
  __syncthreads();
  const int n = RW ? per / 2 : per;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int p = 0; p < passes; ++p) {
    const int base = (p * shift) & (n - 1);
    for (int i = threadIdx.x; i < n; i += kCacheThreads) {
      const int j = (i + base) & (n - 1);
      const float4 v = sm[j];
      add4(acc, v);
      if (RW) sm[n + j] = v;
    }
  }
  if (RW) add4(acc, sm[n + threadIdx.x]);  // the stores count: one of them is part of the result
  out[blockIdx.x * kCacheThreads + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

enum class Level { kL2, kL1, kShared };

class CacheGpu final : public KernelInstance {
 public:
  CacheGpu(GpuBackend& g, const Problem& p, Level level) : g_(g), level_(level) {
    rw_ = p.s("op") == "rw";
    if (p.i("workers") > 1048576) throw InvalidArgument("workers: at most 2^20 blocks");
    if (p.i("passes") > 1048576) throw InvalidArgument("passes: at most 2^20");
    workers_ = static_cast<int>(p.i("workers"));
    passes_ = static_cast<int>(p.i("passes"));
    const std::int64_t per_bytes = p.i("bytes") / workers_;
    per_ = static_cast<int>(std::min<std::int64_t>(per_bytes / 16, 1 << 30));
    if (level != Level::kL2 && (per_ & (per_ - 1)))
      throw InvalidArgument("bytes: each block's part must be a power of two bytes for the L1 and shared kernels");
    if (level == Level::kShared && per_bytes > 48 * 1024)
      throw InvalidArgument("bytes: each block's shared array is at most 48 KB");
    total_ = static_cast<std::size_t>(p.i("bytes")) / 16;
    std::vector<float> host(total_ * 4);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = cache_value(static_cast<std::int64_t>(i));
    x_ = DeviceBuffer(total_ * 16, "cache working set");
    x_.upload(host.data(), host.size() * sizeof(float));
    host_ = std::move(host);
    out_ = DeviceBuffer(static_cast<std::size_t>(workers_) * kCacheThreads * sizeof(float), "cache sums");
  }
  void launch() override {
    const float4* x = x_.get<float4>();
    float* out = out_.get<float>();
    if (level_ == Level::kL2) {
      // rw: x's first half is read, its second half written, slice by slice.
      const int slice = rw_ ? per_ / 2 : per_;
      float4* y = x_.get<float4>() + total_ / 2;
      if (rw_) bwprof_l2_bandwidth<true><<<workers_, kCacheThreads, 0, g_.stream()>>>(x, y, out, slice, workers_, passes_);
      else bwprof_l2_bandwidth<false><<<workers_, kCacheThreads, 0, g_.stream()>>>(x, nullptr, out, slice, workers_, passes_);
    } else if (level_ == Level::kL1) {
      bwprof_l1_bandwidth<<<workers_, kCacheThreads, 0, g_.stream()>>>(x, out, per_, passes_, kCacheThreads);
    } else {
      const std::size_t smem = static_cast<std::size_t>(per_) * 16;
      if (rw_) bwprof_shared_bandwidth<true><<<workers_, kCacheThreads, smem, g_.stream()>>>(x, out, per_, passes_, kCacheThreads);
      else bwprof_shared_bandwidth<false><<<workers_, kCacheThreads, smem, g_.stream()>>>(x, out, per_, passes_, kCacheThreads);
    }
    BWPROF_CHECK_LAUNCH("bwprof_cache_bandwidth");
  }
  Check check() override {
    std::vector<float> got(static_cast<std::size_t>(workers_) * kCacheThreads);
    out_.download(got.data(), got.size() * sizeof(float));
    // sums[s][t]: what thread t reads of part s (its elements t, t + 256, ...) in one pass.
    const int n = rw_ ? per_ / 2 : per_;
    const int parts = level_ == Level::kL2 ? (rw_ ? static_cast<int>(total_ / 2 / n) : static_cast<int>(total_ / n)) : workers_;
    std::vector<double> sums(static_cast<std::size_t>(parts) * kCacheThreads, 0.0);
    for (int s = 0; s < parts; ++s) {
      const std::size_t base = level_ == Level::kL2 ? static_cast<std::size_t>(s) * n : static_cast<std::size_t>(s) * per_;
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < 4; ++c) sums[static_cast<std::size_t>(s) * kCacheThreads + i % kCacheThreads] += host_[(base + i) * 4 + c];
    }
    ErrorMeter m;
    for (int b = 0; b < workers_; ++b)
      for (int t = 0; t < kCacheThreads; ++t) {
        double gold = 0;
        if (level_ == Level::kL2) {
          const int cycles = passes_ / workers_, rest = passes_ % workers_;
          for (int s = 0; s < parts; ++s) gold += cycles * sums[static_cast<std::size_t>(s) * kCacheThreads + t];
          for (int p = 0; p < rest; ++p) gold += sums[static_cast<std::size_t>((b + p) % workers_) * kCacheThreads + t];
        } else {
          gold = passes_ * sums[static_cast<std::size_t>(b) * kCacheThreads + t];
          if (rw_ && level_ == Level::kShared) {
            const std::size_t e = static_cast<std::size_t>(b) * per_ + t;  // sm[n + t] holds x[t]
            for (int c = 0; c < 4; ++c) gold += host_[e * 4 + c];
          }
        }
        m.add(got[static_cast<std::size_t>(b) * kCacheThreads + t], gold);
      }
    if (level_ == Level::kL2 && rw_) {  // y is a copy of x's first half
      std::vector<float> y(total_ / 2 * 4);
      std::vector<float> all(total_ * 4);
      x_.download(all.data(), all.size() * sizeof(float));
      for (std::size_t i = 0; i < y.size(); ++i) m.add(all[y.size() + i], host_[i]);
    }
    m.add_scale(1.0);
    return m.finish(0.0);
  }
  Resources resources() const override {
    if (level_ == Level::kL2) return kernel_resources(rw_ ? bwprof_l2_bandwidth<true> : bwprof_l2_bandwidth<false>, kCacheThreads);
    if (level_ == Level::kL1) return kernel_resources(bwprof_l1_bandwidth, kCacheThreads);
    return kernel_resources(rw_ ? bwprof_shared_bandwidth<true> : bwprof_shared_bandwidth<false>, kCacheThreads, per_ * 16);
  }

 private:
  GpuBackend& g_;
  Level level_;
  bool rw_ = false;
  int workers_ = 1, passes_ = 1, per_ = 1;
  std::size_t total_ = 0;
  std::vector<float> host_;
  DeviceBuffer x_, out_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_l2_gpu(Backend& b, const Problem& p) {
  return std::make_unique<CacheGpu>(as_gpu(b), p, Level::kL2);
}
std::unique_ptr<KernelInstance> make_l1_gpu(Backend& b, const Problem& p) {
  return std::make_unique<CacheGpu>(as_gpu(b), p, Level::kL1);
}
std::unique_ptr<KernelInstance> make_shared_gpu(Backend& b, const Problem& p) {
  return std::make_unique<CacheGpu>(as_gpu(b), p, Level::kShared);
}

}  // namespace bwprof
