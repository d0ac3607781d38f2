// Q4_0, llama.cpp's 4-bit weights: dequantization, and the matrix product that dequantizes on the
// fly (llama.cpp's layout, or re-packed once at load time).
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "common/suite_shapes.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

using namespace suite;

KernelFamily dequant() {
  KernelFamily k;
  k.name = "q4_0_dequant";
  k.family = "q4_0";
  k.order = 60;
  k.doc = "expand Q4_0 blocks (FP16 scale + 32 4-bit values) to FP32/FP16: (q - 8) * scale";
  k.params = {int_param("rows", "", "rows of the matrix"), int_param("cols", "", "columns (multiple of 32)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    if (p.i("cols") % 32) BWPROF_INVALID("cols: must be a multiple of 32 (the Q4_0 block), got " + std::to_string(p.i("cols")));
    checked_elements(p, {"rows", "cols"});
  };
  k.traffic = [](const Problem& p) {
    double n = double(p.i("rows")) * p.i("cols");
    return Traffic{n / 32 * 18, n * elem_bytes(p), 2 * n};
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_q4_0_dequant_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_q4_0_dequant_gpu});
#endif
  k.suite = {{"ffn weight", {{"rows", kFfn}, {"cols", kHidden}}, {{"rows", 512}, {"cols", 256}}},
             {"ffn down weight", {{"rows", kHidden}, {"cols", kFfn}}, {{"rows", 256}, {"cols", 512}}}};
  return k;
}

KernelFamily matmul() {
  KernelFamily k;
  k.name = "q4_0_matmul";
  k.family = "q4_0";
  k.order = 60;
  k.doc = "Y[M,N] = X[M,K] . W[N,K]^T with W in Q4_0 rows, dequantized on the fly";
  k.params = {int_param("M", "1", "rows of X (tokens)"), int_param("N", "", "rows of W (outputs)"),
              int_param("K", "", "inner dimension (multiple of 32)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    if (p.i("K") % 32) BWPROF_INVALID("K: must be a multiple of 32 (the Q4_0 block), got " + std::to_string(p.i("K")));
    checked_elements(p, {"M", "K"});
    checked_elements(p, {"N", "K"});
    checked_elements(p, {"M", "N"});
  };
  k.traffic = [](const Problem& p) {
    double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
    return Traffic{N * Kd / 32 * 18 + M * Kd * elem_bytes(p), M * N * elem_bytes(p), 2 * M * N * Kd};
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_q4_0_matmul_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"llama", "gpu", make_q4_0_matmul_gpu});
  // FP16 only on the matrix units (mma.sync over dequantized halves); BF16 runs its vector kernel.
  k.variants.push_back(Variant{"tiled", "gpu", make_q4_0_matmul_gpu}.on_matrix_units({DType::kF16}));
#endif
  const std::vector<std::string> layouts = {"cpu", "llama", "tiled"};
  for (int m : {1, 8}) {
    k.suite.push_back({"ffn up M=" + std::to_string(m), {{"M", m}, {"N", kFfn}, {"K", kHidden}},
                       {{"M", m}, {"N", 512}, {"K", 256}}, layouts});
    k.suite.push_back({"ffn down M=" + std::to_string(m), {{"M", m}, {"N", kHidden}, {"K", kFfn}},
                       {{"M", m}, {"N", 256}, {"K", 512}}, layouts});
  }
  return k;
}

}  // namespace

void register_family_q4_0(Registry& r) {
  r.add_family(dequant());
  r.add_family(matmul());
}

}  // namespace bwprof
