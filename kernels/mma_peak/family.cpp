// The matrix-unit peaks: one kernel, run by the peaks policy once per arithmetic type the device
// has (Ceiling::kMatrix). No suite configuration: bwprof.peaks() reports it.
#include <algorithm>
#include <cmath>
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

int mma_accumulator_bits(MmaType t) {
  return t == MmaType::kFP8 ? 13 : t == MmaType::kINT8 ? 31 : 23;
}

std::int64_t mma_products_per_step(const std::string& engine, MmaType t) {
  const std::int64_t k = mma_unit_k(t);
  if (engine == "wgmma") return 8 * k;
  if (engine == "mma_sync" || engine == "wmma") return 32 * k;
  if (engine == "mfma") return 16 * k;
  BWPROF_INVALID("engine: unknown matrix engine '" + engine + "' (known: wgmma, mma_sync, mfma, wmma)");
}

int mma_accumulators_per_thread(const std::string& engine) {
  if (engine == "wgmma") return 128;    // 64 x 256 over a warpgroup's 128 threads
  if (engine == "mma_sync") return 32;  // 8 chains of 16 x 8 over 32 lanes
  if (engine == "mfma") return 64;      // 4 chains of 32 x 32 over 64 lanes
  if (engine == "wmma") return 32;      // 4 chains of 16 x 16 over 32 lanes
  BWPROF_INVALID("engine: unknown matrix engine '" + engine + "' (known: wgmma, mma_sync, mfma, wmma)");
}

double finest_bit(double v) {
  v = std::fabs(v);
  if (!(v > 0) || !std::isfinite(v)) BWPROF_INVALID("finest_bit: needs a finite value > 0");
  double g = 1;
  while (std::fmod(v, g) != 0) g /= 2;  // down to the last set bit of a fraction
  while (std::fmod(v, 2 * g) == 0) g *= 2;  // up to it for an integer
  return g;
}

std::int64_t mma_exact_steps(MmaType t, std::int64_t products_per_step) {
  if (products_per_step < 1) BWPROF_INVALID("products_per_step: must be at least 1");
  const MmaOperands o = mma_operands(t);
  const double ab = std::fabs(o.a * o.b), per_step = ab * static_cast<double>(products_per_step);
  // The largest sum the accumulator still holds exactly, then the whole steps that stay below it.
  const double limit = t == MmaType::kINT8 ? 2147483647.0 + 1
                                           : std::ldexp(finest_bit(ab), mma_accumulator_bits(t) + 1);
  const double steps = std::ceil(limit / per_step) - 1;  // s x per_step < limit
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(steps, 1e15)));
}

std::int64_t mma_restart_steps(MmaType t, const std::string& engine, std::int64_t iters, std::int64_t asked) {
  const std::int64_t r = asked > 0 ? asked : mma_exact_steps(t, mma_products_per_step(engine, t));
  return std::max<std::int64_t>(1, std::min(r, iters));
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
              int_param("iters", "64", 1, 1 << 20, "steps of each block (2^19 x K FLOPs each)"),
              int_param("restart", "0", 0, 1 << 20,
                        "steps after which each accumulator chain is added into its thread's FP32 total and starts "
                        "again from zero (0: the longest chain the type's accumulator keeps exact, e.g. 21 steps "
                        "for FP8 under wgmma)")};
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
    // Every type the same long chains: 512 steps on 4 blocks an SM/CU. FP8's narrow accumulator is
    // kept exact by restarting its chains (the `restart` parameter's default), not by shorter runs.
    for (const std::string& t : matrix_types(info))
      runs.push_back(CeilingRun{t, "fp16", {{"type", t}, {"workers", std::to_string(4 * info.compute_units)}, {"iters", "512"}}});
    return runs;
  };
  r.add_family(std::move(k));
}

}  // namespace bwprof
