// The QKV projection on the GPU: one GEMM over the concatenated weights [Wq | Wk | Wv] (fused)
// beside three GEMMs over weights kept apart (separate), each on the best engine this build and
// device have (GemmRunner::best).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/gemm.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

class QkvGpu final : public KernelInstance {
 public:
  QkvGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_qkv_data(p)) {
    const std::int64_t T = p.i("tokens"), H = p.i("hidden"), O = 3 * H;
    X_ = DeviceBuffer::from(host_.X, "QKV X");
    Y_ = DeviceBuffer::from(host_.Y, "QKV Y");
    const GemmRunner::Engine e = GemmRunner::best(g, p.dtype);
    const std::size_t es = dtype_size(p.dtype);
    if (p.variant == "fused") {
      W_ = DeviceBuffer::from(host_.W, "QKV W");
      gemms_.push_back(GemmRunner::make(g, p.dtype, e, {T, O, H, H, O, O}, X_.get(), W_.get(), Y_.get(), nullptr,
                                        Act::kNone));
    } else {
      // Three weights of their own, [H, H] each, as a model that keeps them apart stores them; three
      // outputs [T, H]. check() gathers the outputs into Y's concatenated layout.
      for (int w = 0; w < 3; ++w) {
        HostTensor part(p.dtype, static_cast<std::size_t>(H * H), "QKV weight part");
        for (std::int64_t k = 0; k < H; ++k)
          std::memcpy(static_cast<char*>(part.data()) + k * H * es,
                      static_cast<const char*>(host_.W.data()) + (k * O + w * H) * es, H * es);
        parts_W_[w] = DeviceBuffer::from(part, "QKV weight part");
        parts_Y_[w] = DeviceBuffer(static_cast<std::size_t>(T * H) * es, "QKV output part");
        gemms_.push_back(GemmRunner::make(g, p.dtype, e, {T, H, H, H, H, H}, X_.get(), parts_W_[w].get(),
                                          parts_Y_[w].get(), nullptr, Act::kNone));
      }
    }
  }
  void launch() override {
    for (auto& gm : gemms_) gm->run(g_.stream());
  }
  Check check() override {
    g_.synchronize();
    if (p_.variant == "fused") {
      Y_.to(host_.Y);
    } else {
      const std::int64_t T = p_.i("tokens"), H = p_.i("hidden");
      const std::size_t es = dtype_size(p_.dtype);
      HostTensor part(p_.dtype, static_cast<std::size_t>(T * H), "QKV output part");
      for (int w = 0; w < 3; ++w) {
        parts_Y_[w].to(part);
        for (std::int64_t t = 0; t < T; ++t)
          std::memcpy(static_cast<char*>(host_.Y.data()) + (t * 3 * H + w * H) * es,
                      static_cast<const char*>(part.data()) + t * H * es, H * es);
      }
    }
    return qkv_check(host_, p_);
  }
  Resources resources() const override { return gemms_.front()->resources(); }
  std::string explain() const override {  // the GEMMs' (the same kernel for each of the three)
    return gemms_.front()->explain();
  }

 private:
  GpuBackend& g_;
  Problem p_;
  QkvData host_;
  DeviceBuffer X_, W_, Y_, parts_W_[3], parts_Y_[3];
  std::vector<std::unique_ptr<GemmRunner>> gemms_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_qkv_gpu(Backend& b, const Problem& p) {
  return std::make_unique<QkvGpu>(as_gpu(b), p);
}

}  // namespace bwprof
