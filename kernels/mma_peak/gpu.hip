// The matrix-peak instance: picks the engine the device has (or the one asked for), launches it
// on the backend's stream and checks each thread's sum against the host's formula.
#include <cstdlib>
#include <string>
#include <vector>

#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "common/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "mma_peak/engines.hpp"
#include "mma_peak/mma_peak.hpp"

namespace bwprof {

namespace {

bool is_cdna(const std::string& arch) { return arch == "gfx908" || arch == "gfx90a" || arch.rfind("gfx94", 0) == 0; }
bool is_rdna3(const std::string& arch) { return arch.rfind("gfx11", 0) == 0; }

// The engine for `type` on `arch`: the one asked for, or the fastest the device has; an engine or
// type the device lacks is an InvalidArgument naming it.
std::string pick_engine(const std::string& asked, MmaType type, const std::string& arch) {
  const int sm = sm_version(arch);
  std::string e = asked;
  if (e == "auto") {
#if defined(BWPROF_CUDA) && defined(BWPROF_HAVE_SM90A)
    if (sm == 90) e = "wgmma";
#endif
    if (e == "auto") e = sm >= 80 ? "mma_sync" : is_cdna(arch) ? "mfma" : is_rdna3(arch) ? "wmma" : "none";
  }
  const std::string t = to_string(type);
  if (e == "none") BWPROF_INVALID("engine: " + arch + " has no matrix units bwprof can drive (NVIDIA sm_80+, AMD CDNA, RDNA3)");
#if defined(BWPROF_CUDA)
  if (e == "wgmma" && sm != 90) BWPROF_INVALID("engine: wgmma needs a Hopper GPU (sm_90), this one is " + arch);
#if !defined(BWPROF_HAVE_SM90A)
  if (e == "wgmma") BWPROF_INVALID("engine: this build has no sm_90a code (build it with CUDAARCHS=90a)");
#endif
  if (e == "mma_sync" && sm < 80) BWPROF_INVALID("engine: mma.sync needs sm_80 or later, this GPU is " + arch);
  if (type == MmaType::kFP8 && sm < 89) BWPROF_INVALID("type: fp8 needs sm_89 or later, this GPU is " + arch);
  // The FP8 mma.sync exists in code compiled for sm_89 or later: an sm_80 build runs on an sm_89
  // GPU without it.
  if (type == MmaType::kFP8 && e == "mma_sync" && mma_peak_mma_sync_fp8_code() < 89)
    BWPROF_INVALID("type: fp8: this build's code for " + arch + " was compiled for sm_" +
                   std::to_string(mma_peak_mma_sync_fp8_code()) + ", without FP8 (build it with CUDAARCHS=" +
                   std::to_string(sm) + ")");
  if (e == "mfma" || e == "wmma") BWPROF_INVALID("engine: " + e + " is AMD's; this GPU is " + arch);
#else
  if (e == "mfma" && !is_cdna(arch)) BWPROF_INVALID("engine: MFMA needs AMD CDNA (gfx90a, gfx94x), this GPU is " + arch);
  if (e == "wmma" && !is_rdna3(arch)) BWPROF_INVALID("engine: WMMA needs AMD RDNA3 (gfx11), this GPU is " + arch);
  if (e == "wgmma" || e == "mma_sync") BWPROF_INVALID("engine: " + e + " is NVIDIA's; this GPU is " + arch);
  const bool cdna3 = arch.rfind("gfx94", 0) == 0;
  if ((type == MmaType::kTF32 || type == MmaType::kFP8) && !(e == "mfma" && cdna3))
    BWPROF_INVALID("type: " + t + " needs AMD CDNA3 (gfx94x), this GPU is " + arch);
#endif
  return e;
}

class MmaPeakGpu final : public KernelInstance {
 public:
  MmaPeakGpu(GpuBackend& g, const Problem& p)
      : g_(g), type_(parse_mma_type(p.s("type"))), engine_(pick_engine(p.s("engine"), type_, g.info().arch)) {
    if (p.i("workers") > 1048576) throw InvalidArgument("workers: at most 2^20 blocks");
    if (p.i("iters") > 1048576) throw InvalidArgument("iters: at most 2^20 steps");
    blocks_ = static_cast<int>(p.i("workers"));
    iters_ = static_cast<int>(p.i("iters"));
    restart_ = static_cast<int>(mma_restart_steps(type_, engine_, iters_, p.i("restart")));
    out_ = DeviceBuffer(static_cast<std::size_t>(blocks_) * kMmaPeakThreads * sizeof(float), "matrix peak sums");
  }
  void launch() override {
    const MmaOperands o = mma_operands(type_);
    const MmaPeakLaunch l{type_, blocks_, iters_, restart_, out_.get<float>(), o.a_bits, o.b_bits, g_.stream()};
#if defined(BWPROF_CUDA)
    if (engine_ == "wgmma") mma_peak_wgmma(l);
    else mma_peak_mma_sync(l);
#else
    if (engine_ == "mfma") mma_peak_mfma(l);
    else mma_peak_wmma(l);
#endif
  }
  // Every thread's total against the host's count of the same chains (the restarts leave it whole).
  Check check() override {
    std::vector<float> sums(static_cast<std::size_t>(blocks_) * kMmaPeakThreads);
    out_.download(sums.data(), sums.size() * sizeof(float));
    const double gold = mma_expected_per_thread(type_, iters_);
    ErrorMeter m;
    for (float s : sums) m.add(s, gold);
    return m.finish(1e-5);
  }
  Resources resources() const override {
#if defined(BWPROF_CUDA)
    return engine_ == "wgmma" ? mma_peak_wgmma_resources(type_) : mma_peak_mma_sync_resources(type_);
#else
    return engine_ == "mfma" ? mma_peak_mfma_resources(type_) : mma_peak_wmma_resources(type_);
#endif
  }

 private:
  GpuBackend& g_;
  MmaType type_;
  std::string engine_;
  int blocks_ = 1, iters_ = 1, restart_ = 1;
  DeviceBuffer out_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_mma_peak_gpu(Backend& b, const Problem& p) {
  return std::make_unique<MmaPeakGpu>(as_gpu(b), p);
}

}  // namespace bwprof
