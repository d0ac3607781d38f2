// GEMM (C = act(A.B + bias)) and the QKV projection, which runs the same engines. The GPU engines
// are one file each (engines.hpp); the `vendor` variant exists where the build found the vendor's
// library.
#include <algorithm>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "common/suite_shapes.hpp"
#include "gemm/choice.hpp"
#include "gemm/gemm.hpp"

namespace bwprof {

namespace {

using namespace suite;

// The vendor library's workspace for each GEMM it runs (cuBLASLt's; rocBLAS keeps its own): the
// `vendor` variant's, and in a build with the library every GEMM that takes the best engine too
// (`unfused`, the QKV projection's one or three).
constexpr double kVendorWorkspace = 32.0 * (1 << 20);
#ifdef BWPROF_WITH_VENDOR_BLAS
constexpr bool kVendorIsBest = true;
#else
constexpr bool kVendorIsBest = false;
#endif

KernelFamily gemm_kernel() {
  KernelFamily k;
  k.name = k.family = "gemm";
  k.order = 30;
  k.doc = "C[M,N] = act(A[M,K] . B[K,N] + bias[N]), row-major, FP32 accumulation";
  k.params = {int_param("M", "", 1, kMaxDim, "rows of A and C"), int_param("N", "", 1, kMaxDim, "columns of B and C"),
              int_param("K", "", 1, kMaxDim, "inner dimension"), bool_param("bias", "false", "add a bias row"),
              choice_param("act", "none", {"none", "relu", "gelu", "silu"}, "activation after the bias"),
              // The tensor variant's kernel, tile and K split on NVIDIA GPUs (choice.hpp's rules unless set).
              auto_choice_param("engine", {"skinny", "mma", "wgmma"}, {"tensor"},
                                "tensor variant, NVIDIA: skinny (split K over B's stream, M <= 64), mma (mma.sync, "
                                "sm_80+), wgmma (Hopper, sm_90a builds; rows off 16 bytes copied to padded rows)"),
              auto_choice_param("tile", {"16x128", "64x64", "128x128", "64x128", "128x256"}, {"tensor"},
                                "the engine's block tile, rows x columns: mma 16x128 (M <= 16), 64x64, 128x128; "
                                "wgmma 64x64, 64x128, 128x128, 128x256 (needs engine=mma or wgmma)"),
              auto_int_param("splits", 1, 65535, {"tensor"},
                             "blocks that split K for each output tile (skinny, mma, wgmma; at most K/64, or K/32 "
                             "for skinny)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    const std::string& engine = p.s("engine");
    const std::string& tile = p.s("tile");
    if (tile != "auto") {
      static const std::vector<std::string> mma = {"16x128", "64x64", "128x128"}, wgmma = {"64x64", "64x128", "128x128", "128x256"};
      const auto& ok = engine == "mma" ? mma : wgmma;
      if (engine != "mma" && engine != "wgmma")
        BWPROF_INVALID("tile: name the engine too (engine=mma or engine=wgmma), tile=" + tile);
      if (std::find(ok.begin(), ok.end(), tile) == ok.end())
        BWPROF_INVALID("tile: " + engine + " has no " + tile + " tile");
      if (tile == "16x128" && p.i("M") > gemm::kSmallRows)
        BWPROF_INVALID("tile: mma's 16x128 tile takes M <= " + std::to_string(gemm::kSmallRows));
    }
    if (engine == "skinny" && p.i("M") > gemm::kSmallMaxRows)
      BWPROF_INVALID("engine: the skinny kernel takes M <= " + std::to_string(gemm::kSmallMaxRows));
    checked_elements(p, {"M", "K"});
    checked_elements(p, {"K", "N"});
    checked_elements(p, {"M", "N"});
  };
  k.traffic = [](const Problem& p) {
    double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
    double bias = p.b("bias") ? N : 0;
    return Traffic{(M * Kd + Kd * N + bias) * elem_bytes(p), M * N * elem_bytes(p),
                   2 * M * N * Kd + (p.b("bias") ? M * N : 0)};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
    // A, B, C and the bias, and the vendor library's workspace or the tensor engines' scratch
    // (choice.hpp: the split-K accumulator, the skinny kernel's counters, padded copies).
    const bool vendor = p.variant == "vendor" || (p.variant == "unfused" && kVendorIsBest);
    const bool split = p.variant == "tensor" || (p.variant == "unfused" && !kVendorIsBest);
    const bool asked = p.s("engine") != "auto" || p.s("tile") != "auto" || p.opt_i("splits");
    return host_and_device((M * Kd + Kd * N + M * N + (p.b("bias") ? N : 0)) * elem_bytes(p), kind,
                           vendor  ? kVendorWorkspace
                           : split ? gemm::tensor_scratch_bytes(p.i("M"), p.i("N"), p.i("K"), asked,
                                                                p.opt_i("splits").value_or(0))
                                   : 0.0);
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_gemm_cpu});
#ifdef BWPROF_WITH_GPU
#ifdef BWPROF_WITH_VENDOR_BLAS
  k.variants.push_back(Variant{"vendor", "gpu", make_gemm_gpu}.on_matrix_units());  // first: the GPU's default
#endif
  k.variants.push_back(Variant{"tiled", "gpu", make_gemm_gpu});
  k.variants.push_back(
      Variant{"tensor", "gpu", make_gemm_gpu}.only({DType::kF16, DType::kBF16}).on_matrix_units());
  k.variants.push_back(Variant{"unfused", "gpu", make_gemm_gpu}.on_matrix_units());
#endif
  // Implementations side by side where the GPU has them: the vendor library, bwprof's kernel on
  // the matrix units (FP16, BF16) and its shared-memory tiled kernel.
  const std::vector<std::string> impls = {"vendor", "tensor", "tiled"};
  struct Shape {
    const char* label;
    int m, n, k;
  };
  // BF16 beside FP32 and FP16 where most inference runs it: the decode product and the FFN.
  const std::vector<DType> all = {DType::kF32, DType::kF16, DType::kBF16}, two = {DType::kF32, DType::kF16};
  for (const Shape& s : {Shape{"decode", 1, kHidden, kHidden}, Shape{"prefill", 32, kHidden, kHidden},
                         Shape{"prefill", 128, kHidden, kHidden}, Shape{"ffn", 128, kFfn, kHidden}})
    k.suite.push_back({s.label, {{"M", s.m}, {"N", s.n}, {"K", s.k}},
                       {{"M", std::max(1, s.m / 4)}, {"N", std::max(s.n / 4, 64)}, {"K", std::max(s.k / 4, 64)}},
                       impls, s.m == 1 || s.n == kFfn ? all : two});
  k.suite.push_back({"ffn+bias+gelu", {{"M", 128}, {"N", kFfn}, {"K", kHidden}, {"bias", true}, {"act", "gelu"}},
                     {{"M", 32}, {"N", 512}, {"K", 256}, {"bias", true}, {"act", "gelu"}},
                     {"vendor", "tensor", "unfused"}});
  k.suite.push_back({"encoder qkv", {{"M", kEncTokens}, {"N", 3 * kEncHidden}, {"K", kEncHidden}},
                     {{"M", 16}, {"N", 384}, {"K", 256}}, impls});
  return k;
}

KernelFamily qkv_projection() {
  KernelFamily k;
  k.name = "qkv_projection";
  k.family = "gemm";
  k.order = 30;
  k.doc = "[Q|K|V][tokens, 3*hidden] = X[tokens, hidden] . [Wq|Wk|Wv]: one GEMM over the concatenated "
          "weights (fused) or three GEMMs (separate)";
  k.params = {int_param("tokens", "", 1, kMaxDim, "rows of X"), int_param("hidden", "", 1, kMaxDim, "model width (each of Q, K, V)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    checked_elements(p, {"tokens", "hidden"});
    checked_mul(checked_elements(p, {"hidden", "hidden"}), 12, "3*hidden*hidden");
    checked_mul(checked_elements(p, {"tokens", "hidden"}), 12, "3*tokens*hidden");
  };
  k.traffic = [](const Problem& p) {
    double T = p.i("tokens"), H = p.i("hidden");
    return Traffic{(T * H + 3 * H * H) * elem_bytes(p), 3 * T * H * elem_bytes(p), 2 * T * 3 * H * H};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double T = p.i("tokens"), H = p.i("hidden"), es = elem_bytes(p);
    const bool separate = p.variant == "separate";
    // The GEMMs' vendor workspace, or the tensor engines' scratch (choice.hpp).
    Footprint f = host_and_device((T * H + 3 * H * H + 3 * T * H) * es, kind,
                                  kVendorIsBest ? (separate ? 3 : 1) * kVendorWorkspace
                                  : separate ? 3 * gemm::tensor_scratch_bytes(p.i("tokens"), p.i("hidden"), p.i("hidden"))
                                             : gemm::tensor_scratch_bytes(p.i("tokens"), 3 * p.i("hidden"), p.i("hidden")));
    if (kind == "gpu" && separate) {
      // Three weights [H, H] and outputs [T, H] of their own instead of W; one of each staged on
      // the host at a time.
      f.device_bytes += 3 * T * H * es;
      f.host_bytes += std::max(H * H, T * H) * es;
    }
    return f;
  };
  k.variants.push_back(Variant{"fused", "cpu", make_qkv_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"fused", "gpu", make_qkv_gpu}.on_matrix_units());
  k.variants.push_back(Variant{"separate", "gpu", make_qkv_gpu}.on_matrix_units());
#endif
  k.suite.push_back({"encoder qkv", {{"tokens", kEncTokens}, {"hidden", kEncHidden}},
                     {{"tokens", 16}, {"hidden", 256}}, {"fused", "separate"}});
  return k;
}

}  // namespace

void register_family_gemm(Registry& r) {
  r.add_family(gemm_kernel());
  r.add_family(qkv_projection());
}

}  // namespace bwprof
