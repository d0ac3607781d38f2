// The intensity sweep: `fmas` dependent FMAs per element read and written; sweeping fmas walks a
// kernel from the bandwidth roof to the compute roof (the empirical roofline).
#include <cstdio>
#include <string>

#include "bwprof/registry.hpp"
#include "intensity_sweep/intensity_sweep.hpp"

namespace bwprof {

void register_family_intensity_sweep(Registry& r) {
  KernelFamily k;
  k.name = "intensity_sweep";
  k.family = "roofline";
  k.order = 90;
  k.doc = "y = x after `fmas` dependent FMAs per element: sweeping fmas traces the empirical roofline";
  k.params = {int_param("n", "16777216", 1, kMaxElements, "elements"), int_param("fmas", "16", 1, 1 << 20, "FMAs per element (2 FLOPs each)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) {
    checked_elements(p, {"n"});
    checked_elements(p, {"n", "fmas"});
  };
  k.traffic = [](const Problem& p) {
    const double n = static_cast<double>(p.i("n"));
    return Traffic{n * elem_bytes(p), n * elem_bytes(p), 2.0 * n * p.i("fmas")};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    return host_and_device(2.0 * p.i("n") * elem_bytes(p), kind);  // x, y
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_intensity_sweep_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_intensity_sweep_gpu});
#endif
  // FP32, 2^k FMAs per element read and written, i.e. from 0.25 to 512 FLOP/byte (the roofline
  // chart draws these rows as the measured curve).
  for (int e = 0; e < 12; ++e) {
    const int fmas = 1 << e;
    char label[32];
    std::snprintf(label, sizeof label, "I=%g", fmas / 4.0);
    k.suite.push_back({label, {{"n", 1 << 24}, {"fmas", fmas}}, {{"n", 1 << 18}, {"fmas", fmas}}, {}, {DType::kF32}});
  }
  r.add_family(std::move(k));
}

}  // namespace bwprof
