// GEMV y = W.x: a linear layer at batch 1 (the decode step's matrix-vector product).
#include <string>

#include "bwprof/registry.hpp"
#include "common/suite_shapes.hpp"
#include "gemv/gemv.hpp"

namespace bwprof {

void register_family_gemv(Registry& r) {
  using namespace suite;
  KernelFamily k;
  k.name = "gemv";
  k.family = "gemm";
  k.order = 35;        // in the kernel list after the GEMM folder's kernels, as it always was
  k.suite_order = 25;  // in the suite before them: the memory-bound decode product first
  k.doc = "y[N] = W[N,K] . x[K], W row-major (a linear layer at batch 1), FP32 accumulation";
  k.params = {int_param("N", "", 1, kMaxDim, "rows of W (outputs)"), int_param("K", "", 1, kMaxDim, "columns of W (inputs)"),
              int_param("rotate", "1", 1, 1024,
                        "copies of W used in turn (GPU): with cache='hot', copies that together exceed the L2 "
                        "keep W out of it without a flush between runs")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) { checked_elements(p, {"N", "K"}); };
  k.traffic = [](const Problem& p) {
    double N = p.i("N"), Kd = p.i("K");
    return Traffic{(N * Kd + Kd) * elem_bytes(p), N * elem_bytes(p), 2 * N * Kd};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double N = p.i("N"), Kd = p.i("K"), es = elem_bytes(p);
    // W, x and y; on the GPU `rotate` copies of W.
    return host_and_device((N * Kd + N + Kd) * es, kind, (p.i("rotate") - 1) * N * Kd * es);
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_gemv_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_gemv_gpu});
#endif
  k.suite = {{"decode {N}x{K}", {{"N", kHidden}, {"K", kHidden}}, {{"N", 256}, {"K", 256}}},
             {"decode ffn {N}x{K}", {{"N", kFfn}, {"K", kHidden}}, {{"N", 512}, {"K", 256}}},
             {"{N}x{K}", {{"N", 4096}, {"K", 4096}}, {{"N", 512}, {"K", 512}}}};
  r.add_family(std::move(k));
}

}  // namespace bwprof
