// p2p_copy: a copy from the measured GPU to GPU `peer`, one way or both ways at once. Needs two
// GPUs, so it runs only when asked for (`bwprof.p2p_matrix()`, `python3 -m bwprof p2p`, or
// `bench --kernels p2p_copy`), never in the default suite.
#include "bwprof/registry.hpp"
#include "p2p/p2p.hpp"

namespace bwprof {

void register_family_p2p(Registry& r) {
  KernelFamily k;
  k.name = "p2p_copy";
  k.family = "p2p";
  k.order = 86;  // after the transfers
  k.doc = "copy from this GPU to GPU `peer` through the runtime's peer copy (after enabling peer access); "
          "direction=bi copies both ways at once on two streams; bound by the link between the two";
  k.params = {int_param("peer", "1", 0, 1023, "the other GPU's ordinal"),
              int_param("bytes", "268435456", 1, kMaxElements, "bytes each way"),
              choice_param("direction", "uni", {"uni", "bi"}, "one way, or both ways at once")};
  k.dtypes = {DType::kF32};  // bytes are bytes: one dtype
  // Host: the data and the check's copy; this GPU: the source (and the reverse copy's destination).
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double b = static_cast<double>(p.i("bytes"));
    return Footprint{2 * b, kind == "cpu" ? 0.0 : (p.s("direction") == "bi" ? 2 : 1) * b};
  };
  k.traffic = [](const Problem& p) {
    const double b = static_cast<double>(p.i("bytes"));
    return Traffic{0, p.s("direction") == "bi" ? 2 * b : b, 0};
  };
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"runtime", "gpu", make_p2p_gpu});
#endif
  for (std::int64_t b : {1ll << 20, 64ll << 20, 1ll << 30})
    for (const char* dir : {"uni", "bi"})
      k.suite.push_back(SuiteConfig{"bytes={bytes:bin} {direction}", {{"bytes", b}, {"direction", dir}},
                                    {{"bytes", b > (64ll << 20) ? (64ll << 20) : b}, {"direction", dir}}, {},
                                    {DType::kF32}});
  k.default_suite = false;
  r.add_family(std::move(k));
}

}  // namespace bwprof
