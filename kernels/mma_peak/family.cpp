// The matrix-unit peaks: one kernel, run by the peaks policy once per arithmetic type the device
// has (Ceiling::kMatrix). No suite configuration: bwprof.peaks() reports it.
#include <map>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "mma_peak/mma_peak.hpp"

namespace bwprof {

MmaType parse_mma_type(const std::string& name) {
  if (name == "fp16") return MmaType::kF16;
  if (name == "bf16") return MmaType::kBF16;
  if (name == "tf32") return MmaType::kTF32;
  if (name == "fp8") return MmaType::kFP8;
  if (name == "int8") return MmaType::kINT8;
  BWPROF_INVALID("type: unknown matrix type '" + name + "' (known: fp16, bf16, tf32, fp8, int8)");
}

const char* to_string(MmaType t) {
  switch (t) {
    case MmaType::kF16: return "fp16";
    case MmaType::kBF16: return "bf16";
    case MmaType::kTF32: return "tf32";
    case MmaType::kFP8: return "fp8";
    default: return "int8";
  }
}

int mma_unit_k(MmaType t) { return t == MmaType::kTF32 ? 8 : (t == MmaType::kFP8 || t == MmaType::kINT8) ? 32 : 16; }

MmaOperands mma_operands(MmaType t) {
  switch (t) {
    case MmaType::kF16: return {1.5, -0.5, 0x3E003E00u, 0xB800B800u};
    case MmaType::kBF16: return {1.5, -0.5, 0x3FC03FC0u, 0xBF00BF00u};
    case MmaType::kTF32: return {1.5, -0.25, 0x3FC00000u, 0xBE800000u};
    case MmaType::kFP8: return {1.5, -0.5, 0x3C3C3C3Cu, 0xB0B0B0B0u};
    default: return {3.0, -2.0, 0x03030303u, 0xFEFEFEFEu};
  }
}

namespace {

// The types the matrix units of `info`'s architecture run (the architecture table's rates).
std::vector<std::string> matrix_types(const DeviceInfo& info) {
  std::vector<std::string> out;
  for (const char* t : {"fp16", "bf16", "tf32", "fp8", "int8"})
    if (info.matrix_gflops_theoretical.count(t)) out.push_back(t);
  return out;
}

}  // namespace

void register_family_mma_peak(Registry& r) {
  KernelFamily k;
  k.name = "mma_peak";
  k.family = "roofline";
  k.order = 101;
  k.doc = "independent MMA chains on every SM/CU, moving no data: the matrix units' roof per type (wgmma on "
          "Hopper, mma.sync on other NVIDIA sm_80+, MFMA on CDNA, WMMA on RDNA3)";
  k.params = {choice_param("type", "fp16", {"fp16", "bf16", "tf32", "fp8", "int8"},
                           "the arithmetic: FP16 / BF16 / TF32 / FP8 (e4m3) with FP32 accumulation, INT8 with INT32"),
              choice_param("engine", "auto", {"auto", "wgmma", "mma_sync", "mfma", "wmma"},
                           "the instructions: auto picks the fastest the device has"),
              int_param("workers", "1", 1, 1 << 20, "blocks of 256 threads; the peaks run uses 4 per SM/CU"),
              int_param("iters", "64", 1, 1 << 20, "steps of each block (2^19 x K FLOPs each)")};
  k.dtypes = {DType::kF16};  // nominal: the arithmetic is `type`
  k.validate = [](const Problem& p) { checked_elements(p, {"workers", "iters"}); };
  k.traffic = [](const Problem& p) {
    return Traffic{0, 0, mma_step_flops(parse_mma_type(p.s("type"))) * p.i("workers") * p.i("iters")};
  };
  // A sum per thread of every block, on the device only.
  k.footprint = [](const Problem& p, const std::string& kind) {
    return host_and_device(0, kind, 4.0 * kMmaPeakThreads * p.i("workers"));
  };
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_mma_peak_gpu}.measures(Ceiling::kMatrix));
#endif
  k.ceiling_runs = [](const DeviceInfo& info) {
    std::vector<CeilingRun> runs;
    // FP8 on Hopper accumulates in fewer bits than FP32: a chain of 512 steps per block lost
    // increments (its sums came out 92 % short on the H100), so FP8 runs shorter chains on more
    // blocks (the same FLOPs, every sum exact) and the check still holds it to 1e-5.
    for (const std::string& t : matrix_types(info)) {
      const bool fp8 = t == "fp8";
      runs.push_back(CeilingRun{t, "fp16", {{"type", t}, {"workers", std::to_string((fp8 ? 32 : 4) * info.compute_units)},
                                            {"iters", fp8 ? "64" : "512"}}});
    }
    return runs;
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
