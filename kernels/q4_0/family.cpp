// Q4_0, llama.cpp's 4-bit weights: dequantization, and the matrix product that dequantizes on the
// fly (llama.cpp's layout, or re-packed once at load time).
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
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
  k.params = {int_param("rows", "", 1, kMaxDim, "rows of the matrix"), int_param("cols", "", 1, kMaxDim, "columns (multiple of 32)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    if (p.i("cols") % 32) BWPROF_INVALID("cols: must be a multiple of 32 (the Q4_0 block), got " + std::to_string(p.i("cols")));
    checked_elements(p, {"rows", "cols"});
  };
  k.traffic = [](const Problem& p) {
    double n = double(p.i("rows")) * p.i("cols");
    return Traffic{n / 32 * 18, n * elem_bytes(p), 2 * n};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double R = p.i("rows"), C = p.i("cols");
    // The blocks, the output, and a row of FP32 weights for each thread that quantizes.
    Footprint f = host_and_device(R * C / 32 * 18 + R * C * elem_bytes(p), kind);
    f.host_bytes += 4.0 * C * cpu_threads();
    return f;
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
  k.params = {int_param("M", "1", 1, kMaxDim, "rows of X (tokens)"), int_param("N", "", 1, kMaxDim, "rows of W (outputs)"),
              int_param("K", "", 1, kMaxDim, "inner dimension (multiple of 32)")};
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
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
    const double weights = N * Kd / 32 * 18;
    // X, Y and the weights, and a row of FP32 weights for each thread that quantizes. The GPU's
    // `tiled` variant re-packs the weights once (staged on the host, then on the device instead
    // of them), padded to whole tiles of 16 rows and pairs of blocks: at most (N + 15) x (K/32 + 1)
    // blocks of 18 bytes.
    Footprint f = host_and_device((M * Kd + M * N) * elem_bytes(p) + weights, kind);
    f.host_bytes += 4.0 * Kd * cpu_threads();
    if (kind == "gpu" && p.variant == "tiled") {
      const double packed = (N + 15) * (Kd / 32 + 1) * 18;
      f.host_bytes += packed;
      f.device_bytes += packed - weights;
    }
    return f;
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_q4_0_matmul_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"llama", "gpu", make_q4_0_matmul_gpu});
  // FP16 only on the matrix units (mma.sync over dequantized halves); BF16 runs its vector kernel.
  k.variants.push_back(Variant{"tiled", "gpu", make_q4_0_matmul_gpu}.on_matrix_units({DType::kF16}));
#endif
  const std::vector<std::string> layouts = {"cpu", "llama", "tiled"};
  for (int m : {1, 8}) {
    k.suite.push_back({"ffn up M={M}", {{"M", m}, {"N", kFfn}, {"K", kHidden}},
                       {{"M", m}, {"N", 512}, {"K", 256}}, layouts});
    k.suite.push_back({"ffn down M={M}", {{"M", m}, {"N", kHidden}, {"K", kFfn}},
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
