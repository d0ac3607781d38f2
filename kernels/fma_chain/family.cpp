// The FMA chains: the vector compute roof of a CPU or GPU, which the peaks policy measures per
// dtype (Ceiling::kVector). No suite configuration: bwprof.peaks() reports it.
#include <map>
#include <string>
#include <vector>

#include "bwprof/registry.hpp"
#include "fma_chain/fma_chain.hpp"

namespace bwprof {

void register_family_fma_chain(Registry& r) {
  KernelFamily k;
  k.name = "fma_chain";
  k.family = "roofline";
  k.order = 100;
  k.doc = "independent FMA chains on every core or SM, moving no data: the vector compute roof "
          "(FP32 FMA; packed FP16 HFMA2 on the GPU)";
  k.params = {int_param("workers", "1", 1, 1 << 16,
                        "CPU threads (128 chains each) or GPU blocks (256 threads of 8 chains); the peaks run "
                        "uses every thread, or 8 blocks per SM"),
              int_param("iters", "4096", 1, std::int64_t(1) << 34, "FMAs along each chain (GPU: a multiple of 4096, one launch each)"),
              choice_param("math", "dtype", {"dtype", "fp64"},
                           "the arithmetic: the dtype's (FFMA; HFMA2 for FP16 on the GPU) or FP64 (DFMA)")};
  k.dtypes = {DType::kF32, DType::kF16};
  k.validate = [](const Problem& p) { checked_elements(p, {"workers", "iters"}); };
  k.traffic = [](const Problem& p) {
    const double workers = p.i("workers"), iters = p.i("iters");
    if (p.variant == "cpu") return Traffic{0, 0, 2.0 * kFmaCpuChains * iters * workers};
    const double per_fma = p.dtype == DType::kF32 || p.s("math") == "fp64" ? 2.0 : 4.0;  // HFMA2 does two FMAs
    return Traffic{0, 0, workers * kFmaGpuThreads * iters * kFmaGpuChains * per_fma};
  };
  // Its rows are judged against the roof of the chain they run: FP64, or the dtype's own vector
  // arithmetic (packed FP16 on the GPU; the CPU's chains are FP32).
  k.arithmetic = [](const Problem& p) {
    const std::string type = p.s("math") == "fp64" ? "fp64" : p.variant == "cpu" ? "fp32" : to_string(p.dtype);
    return type + " vector";
  };
  // One sum per worker (CPU); on the GPU a sink of one block's threads.
  k.footprint = [](const Problem& p, const std::string& kind) {
    return host_and_device(4.0 * p.i("workers"), kind, 4.0 * kFmaGpuThreads);
  };
  // The CPU computes FP16-stored data in FP32: its chains are FP32 only, its FP16 roof FP32's.
  k.variants.push_back(Variant{"cpu", "cpu", make_fma_chain_cpu}.only({DType::kF32}).measures(Ceiling::kVector));
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_fma_chain_gpu}.measures(Ceiling::kVector));
#endif
  k.ceiling_params = [](const DeviceInfo& info) -> std::map<std::string, std::string> {
    if (info.kind == "cpu") return {{"workers", std::to_string(info.compute_units)}, {"iters", "16384"}};
    return {{"workers", std::to_string(8 * info.compute_units)}, {"iters", std::to_string(kFmaGpuIters)}};
  };
  k.ceiling_grow = "iters";
  // FP64 beside the per-dtype runs: the same chains in double precision.
  k.ceiling_runs = [](const DeviceInfo& info) {
    CeilingRun run{"fp64", "fp32", {}};
    if (info.kind == "cpu")
      run.params = {{"workers", std::to_string(info.compute_units)}, {"iters", "16384"}, {"math", "fp64"}};
    else
      run.params = {{"workers", std::to_string(8 * info.compute_units)}, {"iters", std::to_string(kFmaGpuIters)},
                    {"math", "fp64"}};
    return std::vector<CeilingRun>{run};
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
