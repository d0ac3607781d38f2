// GEMM C = act(A.B + bias) on the GPU, A[M,K] and B[K,N] row-major, FP32 accumulation. Variants:
//   tiled   shared-memory tiles on the vector units, FP32, FP16 or BF16, any M, N, K
//   tensor  FP16 or BF16 on the matrix units: wgmma fed by the bulk tensor copy engine on NVIDIA Hopper
//           (sm_90a builds), mma.sync m16n8k16 on other NVIDIA GPUs (sm_80+) and for shapes wgmma
//           cannot take (on Hopper, operands whose rows are off 16 bytes are copied into padded
//           scratch for wgmma where that pays, else mma.sync realigns them in shared memory:
//           choice.hpp), MFMA 32x32x8 on AMD CDNA (gfx90a,
//           gfx94x), WMMA 16x16x16 on RDNA3 (gfx11, wave32); GPUs without matrix units (RDNA2) run
//           the tiled kernel. On NVIDIA, up to 16 rows of A (decode steps) run kernels built
//           around B's stream instead, whose time is reading B, as a GEMV's is: mma.sync's 16-row
//           tile where rows are on 16 bytes, else the skinny tensor kernel (skinny_mma.hip)
//   vendor  the vendor library (cuBLASLt and cuBLAS; rocBLAS on AMD), its epilogue applying the
//           bias and activation
//   unfused the vendor (else bwprof's) GEMM, then bwprof's bias + activation kernel: the two-pass
//           form that the fused epilogues are compared with
// This file chooses the engine (GemmRunner::make / best) and holds the gemm family's GPU instance;
// the engines are one file each (engines.hpp lists them), the QKV projection is qkv.hip.
#include <memory>
#include <string>
#include <vector>

#include "bias_act/launch.hpp"
#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/gemm.hpp"
#include "gemm/vendor.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

#ifdef BWPROF_WITH_VENDOR_BLAS
class VendorRunner final : public GemmRunner {
 public:
  VendorRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : lt_(g, dt, VendorGemm::Shape{s.M, s.N, s.K, s.lda, s.ldb, s.ldc}, A, B, C, bias, act) {}
  void run(hipStream_t st) override { lt_.run(st); }
  Resources resources() const override { return {}; }  // the library's kernels are not ours to query

 private:
  VendorGemm lt_;
};
#endif

// Whether this device runs the `tensor` engine on its matrix units, and why not otherwise.
std::string tensor_unavailable(GpuBackend& g) {
#if defined(BWPROF_CUDA)
  const std::string& arch = g.info().arch;  // "sm_90"
  if (sm_version(arch) < 80) return "the tensor variant needs sm_80 or newer (this device: " + arch + ")";
#endif
  return "";
}

class GemmGpu final : public KernelInstance {
 public:
  GemmGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_gemm_data(p)) {
    act_ = parse_act(p.s("act"));
    const std::int64_t M = p.i("M"), N = p.i("N"), K = p.i("K");
    const GemmRunner::Shape s{M, N, K, K, N, N};
    A_ = DeviceBuffer::from(host_.A, "GEMM A");
    B_ = DeviceBuffer::from(host_.B, "GEMM B");
    C_ = DeviceBuffer::from(host_.C, "GEMM C");
    if (p.b("bias")) bias_ = DeviceBuffer::from(host_.bias, "GEMM bias");
    const void* bias = p.b("bias") ? bias_.get() : nullptr;
    const std::string& v = p.variant;
    if (v == "tiled") {
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kTiled, s, A_.get(), B_.get(), C_.get(), bias, act_);
    } else if (v == "tensor") {
      const GemmChoice choice{p.s("engine"), p.s("tile"), p.opt_i("splits").value_or(0)};
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kTensor, s, A_.get(), B_.get(), C_.get(), bias, act_,
                               choice);
    } else if (v == "vendor") {
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kVendor, s, A_.get(), B_.get(), C_.get(), bias, act_);
    } else {  // unfused: the plain GEMM, then the bias + activation kernel over C in place
      unfused_ = p.b("bias") || act_ != Act::kNone;
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::best(g, p.dtype), s, A_.get(), B_.get(), C_.get(), nullptr,
                               Act::kNone);
    }
  }
  void launch() override {
    gemm_->run(g_.stream());
    if (unfused_)
      launch_bias_act(p_.dtype, C_.get(), p_.b("bias") ? bias_.get() : nullptr, C_.get(), host_.C.size(),
                      static_cast<int>(p_.i("N")), act_, g_.sm_count(), g_.stream());
  }
  Check check() override {
    g_.synchronize();
    C_.to(host_.C);
    // cuBLASLt's GELU epilogue is the tanh form, up to 4.73e-4 (absolute) away from the erf form
    // the reference uses: the check allows that bound on each output, beside the rounding rule.
    const bool tanh_gelu = p_.variant == "vendor" && act_ == Act::kGelu;
    return gemm_check(host_, p_, 1e-4, tanh_gelu ? kTanhGeluBound : 0.0);
  }
  std::string explain() const override { return gemm_->explain(); }
  Resources resources() const override {
    // The vendor library's kernels are not ours to query: an unfused row then reports its own pass.
    Resources r = gemm_->resources();
    if (r.block_size <= 0 && unfused_) r = bias_act_resources(p_.dtype, act_);
    return r;
  }

 private:
  GpuBackend& g_;
  Problem p_;
  GemmData host_;
  Act act_;
  bool unfused_ = false;
  DeviceBuffer A_, B_, C_, bias_;
  std::unique_ptr<GemmRunner> gemm_;
};

}  // namespace

GemmRunner::Engine GemmRunner::best(GpuBackend& g, DType dtype) {
#ifdef BWPROF_WITH_VENDOR_BLAS
  return Engine::kVendor;
#else
  if (dtype != DType::kF32 && tensor_unavailable(g).empty()) return Engine::kTensor;
  return Engine::kTiled;
#endif
}

#if defined(BWPROF_CUDA)
namespace {

// The NVIDIA `tensor` GEMM: the engine by choice.hpp's tensor_engine (or as `choice` asks), then
// its tile and K split by the engine's own rules (or as asked).
std::unique_ptr<GemmRunner> nvidia_tensor(GpuBackend& g, DType dtype, const GemmRunner::Shape& s, const void* A,
                                          const void* B, void* C, const void* bias, Act act, const GemmChoice& c) {
  const bool wgmma = gemm::wgmma_available(g);
  gemm::Engine asked = gemm::Engine::kAuto;
  if (c.engine == "skinny") asked = gemm::Engine::kSkinnyMma;
  if (c.engine == "mma") asked = gemm::Engine::kMma;
  if (c.engine == "wgmma") {
    if (!wgmma)
      BWPROF_INVALID("engine: wgmma needs an sm_90 GPU and a build with sm_90a code (this device: " + g.info().arch + ")");
    asked = gemm::Engine::kWgmma;
  }
  if (asked == gemm::Engine::kSkinnyMma && s.M > gemm::kSmallMaxRows)
    BWPROF_INVALID("engine: the skinny kernel takes M <= " + std::to_string(gemm::kSmallMaxRows));
  const gemm::Operands o{s.M,          s.N,          s.K,           s.lda,        s.ldb, s.ldc,
                         gemm::on16(A), gemm::on16(B), gemm::on128(A), gemm::on128(B)};
  const gemm::Engine e = gemm::tensor_engine(o, wgmma, asked, gemm::matrix_scale(g.info().fp16_matrix_gflops_theoretical));
  // The tile asked for (choice.hpp's names: "64x64", ...), of the engine that runs.
  const gemm::MmaTileShape* mma_tile = nullptr;
  int wgmma_tile = -1;
  for (const gemm::MmaTileShape* t : {&gemm::kMma16x128, &gemm::kMma64x64, &gemm::kMma128x128})
    if (c.tile == std::to_string(t->bm) + "x" + std::to_string(t->bn)) mma_tile = t;
  for (int i = 0; i < 4; ++i)
    if (c.tile == gemm::kWgmmaTiles[i].name) wgmma_tile = i;
  switch (e) {
    case gemm::Engine::kSkinnyMma: return gemm::make_skinny_mma(g, dtype, s, A, B, C, bias, act, c.splits);
    case gemm::Engine::kWgmma: return gemm::make_wgmma_sm90(g, dtype, s, A, B, C, bias, act, wgmma_tile, c.splits);
    case gemm::Engine::kPadded16:
      return gemm::make_padded_wgmma(g, dtype, s, A, B, C, bias, act, 8, wgmma_tile, c.splits);
    case gemm::Engine::kPadded128:
      return gemm::make_padded_wgmma(g, dtype, s, A, B, C, bias, act, 64, wgmma_tile, c.splits);
    default: return gemm::make_mma_sm80(g, dtype, s, A, B, C, bias, act, mma_tile, c.splits);
  }
}

}  // namespace
#endif

std::unique_ptr<GemmRunner> GemmRunner::make(GpuBackend& g, DType dtype, Engine e, Shape s, const void* A,
                                             const void* B, void* C, const void* bias, Act act,
                                             const GemmChoice& choice) {
  switch (e) {
    case Engine::kTiled:
      return gemm::make_tiled(g, dtype, s, A, B, C, bias, act);
    case Engine::kTensor: {
      if (dtype == DType::kF32)
        BWPROF_INVALID("dtype: the tensor variant takes fp16 and bf16 only (use tiled or vendor for fp32)");
      const std::string why = tensor_unavailable(g);
      if (!why.empty()) BWPROF_INVALID("variant: " + why + "; available here: tiled, unfused" +
#ifdef BWPROF_WITH_VENDOR_BLAS
                                       std::string(", vendor")
#else
                                       std::string()
#endif
      );
#if defined(BWPROF_CUDA)
      return nvidia_tensor(g, dtype, s, A, B, C, bias, act, choice);
#else
      if (choice.engine != "auto" || choice.tile != "auto" || choice.splits != 0)
        BWPROF_INVALID("engine/tile/splits: choose among NVIDIA's tensor kernels; AMD GPUs run one (MFMA or WMMA)");
      const std::string& arch = g.info().arch;
      if (gemm::has_mfma(arch) && !(dtype == DType::kBF16 && arch == "gfx908"))
        return gemm::make_mfma_cdna(dtype, s, A, B, C, bias, act);
      if (gemm::has_wmma(arch, g.warp_size())) return gemm::make_wmma_rdna3(dtype, s, A, B, C, bias, act);
      return gemm::make_tiled(g, dtype, s, A, B, C, bias, act);  // no matrix units (RDNA2)
#endif
    }
    case Engine::kVendor:
#ifdef BWPROF_WITH_VENDOR_BLAS
      return std::make_unique<VendorRunner>(g, dtype, s, A, B, C, bias, act);
#else
      BWPROF_INVALID("variant: this build has no vendor BLAS (available: tiled, tensor, unfused)");
#endif
  }
  BWPROF_INVALID("variant: unknown GEMM engine");
}

std::unique_ptr<KernelInstance> make_gemm_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemmGpu>(as_gpu(b), p);
}

}  // namespace bwprof
