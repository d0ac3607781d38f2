// Fill: a constant written into a buffer of n elements. Write-only traffic, the other end from a
// read-only reduction (stream_dot).
#include <string>

#include "bwprof/registry.hpp"
#include "fill/fill.hpp"

namespace bwprof {

void register_family_fill(Registry& r) {
  KernelFamily k;
  k.name = k.family = "fill";
  k.order = 15;  // after the stream kernels
  k.doc = "y[i] = c for every element: nothing read, every element written once";
  k.params = {int_param("n", "16777216", 1, kMaxElements, "elements")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.traffic = [](const Problem& p) {
    return Traffic{0, static_cast<double>(checked_elements(p, {"n"})) * elem_bytes(p), 0};
  };
  k.footprint = [](const Problem& p, const std::string& kind) {
    return host_and_device(double(p.i("n")) * elem_bytes(p), kind);
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_fill_cpu});
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_fill_gpu});
#endif
  k.suite = {{"fill n={n:bin}", {{"n", 1 << 24}}, {{"n", 1 << 20}}}};
  r.add_family(std::move(k));
}

}  // namespace bwprof
