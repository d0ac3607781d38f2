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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bias_act/launch.hpp"
#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
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

#if defined(BWPROF_CUDA)
// From kPad128Rows rows on Hopper: wgmma on copies of the operands padded to 128-byte rows (the
// copy engine's swizzle line) where choice.hpp's pad128_pays() says the copies cost little against
// the GEMM (measured there), given that wgmma runs at all (rows on 16 bytes, or their 16-byte copies
// pay). BWPROF_GEMM_PAD=128 asks for it at any M >= kPad128Rows; =1 keeps copies to 16-byte rows
// only, =0 none. nullptr: the general rules decide.
std::unique_ptr<GemmRunner> large_m_choice(GpuBackend& g, DType dtype, const GemmRunner::Shape& s, const void* A,
                                           const void* B, void* C, const void* bias, Act act, const std::string& pad,
                                           bool want_wgmma) {
  if (s.M < gemm::kPad128Rows || !gemm::wgmma_available(g) || pad == "0" || pad == "1") return nullptr;
  if (pad != "128") {
    const bool need_a = !gemm::tma_addressable(A, s.lda), need_b = !gemm::tma_addressable(B, s.ldb);
    const bool a128 = gemm::rows_off128(A, s.lda), b128 = gemm::rows_off128(B, s.ldb);
    const bool wgmma = (!need_a && !need_b) || want_wgmma ||
                       gemm::pad_pays(s.M, s.N, s.K, need_a, need_b, gemm::on16(A) && gemm::on16(B));
    if (!wgmma || !gemm::pad128_pays(s.M, s.N, s.K, need_a, need_b, a128, b128)) return nullptr;
  }
  return gemm::make_padded_wgmma(g, dtype, s, A, B, C, bias, act, 64);
}
#endif

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
      gemm_ = GemmRunner::make(g, p.dtype, GemmRunner::Engine::kTensor, s, A_.get(), B_.get(), C_.get(), bias, act_);
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

std::unique_ptr<GemmRunner> GemmRunner::make(GpuBackend& g, DType dtype, Engine e, Shape s, const void* A,
                                             const void* B, void* C, const void* bias, Act act) {
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
      // A few rows of A (M <= kSmallRows, choice.hpp): the time is reading B, so a kernel built
      // around B's stream: rows of A and B on 16 bytes (small_m_mma), mma.sync's 16-row tile
      // (mma_sm80.hip); otherwise the skinny tensor kernel (skinny_mma.hip, mma.sync on N x M, K
      // split over blocks), which reads rows at any alignment. Then, from kPad128Rows rows on
      // Hopper, copies padded to 128-byte rows where they pay (large_m_choice). Then, where wgmma is
      // available (Hopper, sm_90a build): wgmma on A and B in place where the copy engine can
      // address them (16-byte aligned rows), else on padded copies of the misaligned ones where
      // pad_pays() (choice.hpp: the copies' estimated time plus wgmma's against mma.sync's on the
      // unaligned rows: a few rows with B off 16 bytes stay in place). Otherwise mma.sync, which
      // reads unaligned rows in place (realigned in shared memory where A and B start on 16 bytes),
      // has a 16-row tile and splits K over blocks.
      // Knobs for benchmarks and tests: BWPROF_GEMM_TILE asks for a kernel ("gemv" the vector-unit
      // skinny kernel, "tc_skinny" the skinny tensor one, each up to 64 rows; a wgmma tile such as
      // "64x128" wgmma, padding as needed; an mma.sync tile "large", "medium", "small" or "skinny"
      // mma.sync); BWPROF_GEMM_PAD=1 pads to 16-byte rows wherever wgmma needs it (never to 128
      // bytes), =0 never, =128 (M >= kPad128Rows) to 128-byte rows (large_m_choice);
      // BWPROF_GEMM_WGMMA=0 turns wgmma off; BWPROF_GEMM_SPLITS and BWPROF_GEMM_REDUCE (slots, chain)
      // set wgmma's split K (wgmma_sm90.hip); BWPROF_GEMM_SMALL_WAVES the skinny tensor kernel's;
      // BWPROF_GEMM_UNALIGNED=regs has mma.sync load unaligned rows through registers.
      const std::string forced = gemm::tile_knob();
      const std::vector<std::string> pads = {"0", "1", "128"};
      const auto pad_knob = knob_choice("BWPROF_GEMM_PAD", pads);
      const std::string pad = pad_knob ? pads[*pad_knob] : "";
      const bool want_wgmma = forced.find('x') != std::string::npos;
      const bool want_mma = forced == "large" || forced == "medium" || forced == "small" || forced == "skinny";
      if (forced == "gemv") {
        if (s.M > gemm::kSkinnyMaxRows)
          BWPROF_INVALID("BWPROF_GEMM_TILE=gemv: the skinny kernel takes M <= " + std::to_string(gemm::kSkinnyMaxRows));
        return gemm::make_skinny(g, dtype, s, A, B, C, bias, act);
      }
      if (forced == "tc_skinny") {
        if (s.M > gemm::kSmallMaxRows)
          BWPROF_INVALID("BWPROF_GEMM_TILE=tc_skinny: the skinny tensor kernel takes M <= " +
                         std::to_string(gemm::kSmallMaxRows));
        return gemm::make_skinny_mma(g, dtype, s, A, B, C, bias, act);
      }
      if (forced.empty() && s.M <= gemm::kSmallRows) {
        const bool a_aligned = s.K % 8 == 0 && gemm::tma_addressable(A, s.lda);
        const bool b_aligned = s.N % 8 == 0 && gemm::tma_addressable(B, s.ldb);
        if (gemm::small_m_mma(a_aligned, b_aligned) && s.ldc % 2 == 0)
          return gemm::make_mma_sm80(g, dtype, s, A, B, C, bias, act);  // its 16-row tile at M <= 16
        return gemm::make_skinny_mma(g, dtype, s, A, B, C, bias, act);
      }
      if (!want_mma)
        if (auto r = large_m_choice(g, dtype, s, A, B, C, bias, act, pad, want_wgmma)) return r;
      if (!want_mma && gemm::wgmma_available(g)) {
        if (gemm::wgmma_fits(g, s, A, B, C)) return gemm::make_wgmma_sm90(g, dtype, s, A, B, C, bias, act);
        const bool pad_a = !gemm::tma_addressable(A, s.lda), pad_b = !gemm::tma_addressable(B, s.ldb);
        if (pad != "0" && (want_wgmma || pad == "1" ||
                           gemm::pad_pays(s.M, s.N, s.K, pad_a, pad_b, gemm::on16(A) && gemm::on16(B))))
          return gemm::make_padded_wgmma(g, dtype, s, A, B, C, bias, act);
      }
      return gemm::make_mma_sm80(g, dtype, s, A, B, C, bias, act);
#else
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

std::string gemm::tile_knob() {
  static const std::vector<std::string> tiles = {"gemv",   "tc_skinny", "large",   "medium", "small",
                                                 "skinny", "128x256",   "128x128", "64x128", "64x64"};
  const auto k = knob_choice("BWPROF_GEMM_TILE", tiles);
  return k ? tiles[*k] : "";
}

void gemm::explain(const std::string& line) {
  const char* path = std::getenv("BWPROF_GEMM_EXPLAIN");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

std::unique_ptr<KernelInstance> make_gemm_gpu(Backend& b, const Problem& p) {
  return std::make_unique<GemmGpu>(as_gpu(b), p);
}

}  // namespace bwprof
