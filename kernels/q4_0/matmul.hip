// Q4_0 matrix-vector / small-batch product on the GPU, dequantized on the fly: `llama` reads
// llama.cpp's row layout (18-byte blocks, 2-byte aligned); `tiled` reads a layout re-packed once at
// load time: for FP16 on NVIDIA (sm_80+) the matrix units' fragment order (matmul_mma_sm80.hip),
// otherwise each row's 16-byte quant groups aligned for 16-byte loads, its scales apart.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

class Q4MatmulGpu final : public KernelInstance {
 public:
  Q4MatmulGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_matmul_data(p)) {
    for (const char* n : {"M", "N", "K"})
      if (p.i(n) > 2147483647) throw InvalidArgument(std::string(n) + ": at most 2^31-1 on the GPU");
    tiled_ = p.variant == "tiled";
    x_ = DeviceBuffer::from(host_.X, "activations X");
    y_ = DeviceBuffer::from(host_.Y, "output Y");
    if (tiled_ && p.dtype == DType::kF16) mma_ = make_q4_mma_matmul(g, p, host_.W.data());
    if (mma_) {
      // The tensor-core path holds its own re-packed weights.
    } else if (tiled_) {
      // Re-pack once, as a model loader would: quants of each block 16-byte aligned, scales apart.
      const std::size_t blocks = host_.W.size() / kQ4BlockBytes;
      HostBytes quants(blocks * 16, "re-packed Q4_0 quants"), scales(blocks * 2, "re-packed Q4_0 scales");
      for (std::size_t b = 0; b < blocks; ++b) {
        std::memcpy(scales.data() + 2 * b, host_.W.data() + b * kQ4BlockBytes, 2);
        std::memcpy(quants.data() + 16 * b, host_.W.data() + b * kQ4BlockBytes + 2, 16);
      }
      w_ = DeviceBuffer::from(quants, "re-packed Q4_0 quants");
      scales_ = DeviceBuffer::from(scales, "re-packed Q4_0 scales");
    } else {
      w_ = DeviceBuffer::from(host_.W, "Q4_0 weights");
    }
    warp_ = g.warp_size();
  }
  void launch() override {
    gpu::by_dtype(p_.dtype, [&](auto t) { run<typename decltype(t)::type>(); });
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.Y);
    return q4_matmul_check(host_, p_);
  }
  // The matrix units' kernel by name where it runs; else the vector units' (one per rows of X).
  std::string explain() const override { return mma_ ? mma_->explain() : ""; }
  Resources resources() const override {
    if (mma_) return mma_->resources();
    return p_.dtype == DType::kF32 ? q4_vec_f32_resources(tiled_)
           : p_.dtype == DType::kF16 ? q4_vec_f16_resources(tiled_)
                                     : q4_vec_bf16_resources(tiled_);
  }

 private:
  template <class T>
  void run() {
    const int M = static_cast<int>(p_.i("M")), N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    if (mma_) {  // FP16 only (BF16 takes the vector-unit tiled kernel)
      mma_->run(x_.get<__half>(), y_.get<__half>(), M, g_.stream());
      return;
    }
    for (int m0 = 0; m0 < M; m0 += 8) {  // rows of X in groups of up to 8, each group one pass over W
      const Q4VecArgs a{w_.get<unsigned char>(), scales_.get<__half>(), x_.get<T>() + static_cast<std::size_t>(m0) * K,
                        y_.get<T>() + static_cast<std::size_t>(m0) * N, std::min(8, M - m0), N, K, warp_, tiled_,
                        g_.stream()};
      if (p_.dtype == DType::kF32) q4_vec_f32(a);
      else if (p_.dtype == DType::kF16) q4_vec_f16(a);
      else q4_vec_bf16(a);
    }
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul");
  }

  GpuBackend& g_;
  Problem p_;
  Q4MatmulData host_;
  DeviceBuffer x_, y_, w_, scales_;
  bool tiled_ = false;
  int warp_ = 32;
  std::unique_ptr<Q4MmaMatmul> mma_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4MatmulGpu>(as_gpu(b), p);
}

}  // namespace bwprof
