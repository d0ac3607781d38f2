// Layer norm over the rows of a [rows, cols] matrix, FP32 statistics.
#include <string>

#include "bwprof/registry.hpp"
#include "common/suite_shapes.hpp"
#include "layernorm/layernorm.hpp"

namespace bwprof {

void register_family_layernorm(Registry& r) {
  using namespace suite;
  KernelFamily k;
  k.name = k.family = "layernorm";
  k.order = 70;
  k.doc = "y = (x - mean) / sqrt(var + 1e-5) * weight + bias over each row, FP32 statistics";
  k.params = {int_param("rows", "", 1, kMaxDim, "rows (tokens)"), int_param("cols", "", 1, kMaxDim, "normalized width")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) { checked_elements(p, {"rows", "cols"}); };
  k.traffic = [](const Problem& p) {
    double R = p.i("rows"), C = p.i("cols");
    // Per element: mean (1), variance (3), normalize, scale, shift (4).
    return Traffic{(R * C + 2 * C) * elem_bytes(p), R * C * elem_bytes(p), 8 * R * C};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double R = p.i("rows"), C = p.i("cols");
    return host_and_device((2 * R * C + 2 * C) * elem_bytes(p), kind);  // x, y, weight, bias
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_layernorm_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_layernorm_gpu});
#endif
  k.suite = {{"prefill {rows}", {{"rows", 128}, {"cols", kHidden}}, {{"rows", 32}, {"cols", kHidden}}},
             {"encoder", {{"rows", kEncTokens}, {"cols", kEncHidden}}, {{"rows", 16}, {"cols", kEncHidden}}},
             {"{rows}x{cols}", {{"rows", 4096}, {"cols", 4096}}, {{"rows", 64}, {"cols", 1024}}}};
  r.add_family(std::move(k));
}

}  // namespace bwprof
