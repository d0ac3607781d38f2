// Bias + activation (ReLU, GELU, SiLU, or none: the bias add alone, as a GEMM without a bias
// epilogue needs it) over a [rows, cols] matrix: fused in one pass, or the unfused two-kernel form
// (GPU) it is compared with.
#include <string>

#include "bias_act/bias_act.hpp"
#include "bwprof/registry.hpp"
#include "common/suite_shapes.hpp"

namespace bwprof {

void register_family_bias_act(Registry& r) {
  using namespace suite;
  KernelFamily k;
  k.name = "bias_act";
  k.family = "bias_act";
  k.order = 80;
  k.doc = "y = act(x + bias[col]) in one pass";
  k.params = {int_param("rows", "", 1, kMaxDim, "rows (tokens)"), int_param("cols", "", 1, kMaxDim, "features"),
              choice_param("act", "gelu", {"relu", "gelu", "silu", "none"}, "activation (none: the bias add alone)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) { checked_elements(p, {"rows", "cols"}); };
  k.traffic = [](const Problem& p) {
    double R = p.i("rows"), C = p.i("cols");
    // The add and the activation, each counted as one operation.
    return Traffic{(R * C + C) * elem_bytes(p), R * C * elem_bytes(p), (p.s("act") == "none" ? 1 : 2) * R * C};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double R = p.i("rows"), C = p.i("cols");
    return host_and_device((2 * R * C + C) * elem_bytes(p), kind);  // x, y, bias
  };
  k.variants.push_back(Variant{"fused", "cpu", make_bias_act_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"fused", "gpu", make_bias_act_gpu});
  k.variants.push_back(Variant{"unfused", "gpu", make_bias_act_gpu});
#endif
  for (const char* act : {"relu", "gelu", "silu"})
    k.suite.push_back({std::string("ffn ") + act, {{"rows", 128}, {"cols", kFfn}, {"act", act}},
                       {{"rows", 16}, {"cols", 1024}, {"act", act}}, {"fused", "unfused"}});
  r.add_family(std::move(k));
}

}  // namespace bwprof
