// The FMA chains: the vector compute roof of a CPU or GPU, which the peaks policy measures per
// arithmetic type (Ceiling::kVector). No suite configuration: bwprof.peaks() reports it.
#include <map>
#include <string>
#include <vector>

#include "bwprof/arch.hpp"
#include "bwprof/registry.hpp"
#include "fma_chain/fma_chain.hpp"

namespace bwprof {

void register_family_fma_chain(Registry& r) {
  KernelFamily k;
  k.name = "fma_chain";
  k.family = "roofline";
  k.order = 100;
  k.doc = "independent FMA chains on every core or SM, moving no data: the vector compute roof "
          "(FP32 FMA; packed FP16 HFMA2 and BF16 HFMA2.BF16 on the GPU; FP64 DFMA with math=fp64)";
  k.params = {int_param("workers", "1", 1, 1 << 16,
                        "CPU threads (128 chains each) or GPU blocks (256 threads of 8 chains); the peaks run "
                        "uses every thread, or 8 blocks per SM"),
              int_param("iters", "4096", 1, std::int64_t(1) << 34, "FMAs along each chain (GPU: a multiple of 4096, one launch each)"),
              choice_param("math", "dtype", {"dtype", "fp64"},
                           "the arithmetic: the dtype's (FFMA; on the GPU packed HFMA2 for FP16, packed BF16 "
                           "FMAs for BF16 on sm_80+) or FP64 (DFMA)")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.validate = [](const Problem& p) { checked_elements(p, {"workers", "iters"}); };
  // A packed FMA (two lanes of FP16 or BF16) is two FMAs: 4 FLOPs.
  k.traffic = [](const Problem& p) {
    const double workers = p.i("workers"), iters = p.i("iters");
    if (p.variant == "cpu") return Traffic{0, 0, 2.0 * kFmaCpuChains * iters * workers};
    const double per_fma = p.dtype == DType::kF32 || p.s("math") == "fp64" ? 2.0 : 4.0;
    return Traffic{0, 0, workers * kFmaGpuThreads * iters * kFmaGpuChains * per_fma};
  };
  // Its rows are judged against the roof of the chain they run: FP64, or the dtype's own vector
  // arithmetic (packed FP16 / BF16 on the GPU; the CPU's chains are FP32).
  k.arithmetic = [](const Problem& p) { return fma_chain_arithmetic(p) + " vector"; };
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
  // Beside the per-dtype runs: the same chains in double precision, and packed BF16 on the GPUs that
  // have it (NVIDIA sm_80 and later; AMD's vector ALUs have no packed BF16 FMA).
  k.ceiling_runs = [](const DeviceInfo& info) {
    std::vector<CeilingRun> runs;
    if (info.kind == "cpu") {
      runs.push_back({"fp64", "fp32", {{"workers", std::to_string(info.compute_units)}, {"iters", "16384"},
                                       {"math", "fp64"}}});
      return runs;
    }
    const std::map<std::string, std::string> gpu = {{"workers", std::to_string(8 * info.compute_units)},
                                                    {"iters", std::to_string(kFmaGpuIters)}};
    CeilingRun fp64{"fp64", "fp32", gpu};
    fp64.params["math"] = "fp64";
    runs.push_back(fp64);
    if (has_packed_bf16(info)) runs.push_back({"bf16", "bf16", gpu});
    return runs;
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
