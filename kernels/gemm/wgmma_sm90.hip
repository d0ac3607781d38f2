// The `tensor` GEMM on NVIDIA Hopper (sm_90a builds): the runner, which chooses the tile, the K
// split and clusters (choice.hpp's wgmma_plan) and launches the wgmma kernel (wgmma_sm90_kernel.hpp)
// through its storage type's launcher (wgmma_sm90.hpp); and where the path is available.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/wgmma_sm90.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

class WgmmaRunner final : public GemmRunner {
 public:
  WgmmaRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act,
              int tile, std::int64_t splits)
      : act_(act), launch_(dt == DType::kBF16 ? gemm::wgmma_bf16 : gemm::wgmma_f16) {
    gemm::check_int_sizes(s);
    // The tile and K split of least estimated time, and clusters (choice.hpp's wgmma_plan).
    const gemm::WgmmaPlan plan = gemm::wgmma_plan(s.M, s.N, s.K, gemm::rows_off128(B, s.ldb), g.sm_count(), tile, splits,
                                                  gemm::matrix_scale(g.info().fp16_matrix_gflops_theoretical));
    tile_ = plan.tile, cluster_ = plan.cluster;
    const gemm::WgmmaTile& t = gemm::kWgmmaTiles[plan.tile];
    if (plan.splits > 65535 || plan.tiles > 2147483647) BWPROF_INVALID("M/N/K: too large for the wgmma GEMM's grid");
    args_ = gemm::WgmmaArgs{A, B, bias, C, nullptr, nullptr, s.M, s.N, s.K, s.lda, s.ldb, s.ldc,
                            plan.split_steps, plan.splits, plan.slots, {}, {}};
    if (plan.splits > 1) {
      const double sums_bytes = static_cast<double>(plan.tiles) * t.bm * t.bn * sizeof(float);  // every tile once
      // Slots need (splits - 1) tiles' sums: beyond kWgmmaSlotsMaxBytes the chain runs instead.
      ws_ = DeviceBuffer(static_cast<std::size_t>(sums_bytes * (plan.slots ? plan.splits - 1 : 1)), "GEMM split-K tile sums");
      counters_ = DeviceBuffer(static_cast<std::size_t>(plan.tiles) * sizeof(int), "GEMM split-K tile counters");
      counters_.fill(0);
      args_.ws = ws_.get(), args_.counts = counters_.get<int>();
    }
    explain_ = "wgmma " + std::string(t.name) + " splits " + std::to_string(plan.splits) +
               (plan.slots ? " by slots" : "") + (cluster_ > 1 ? " cluster 2 sharing B" : std::string()) + " (" +
               std::to_string(plan.tiles * plan.splits) + " blocks, estimate " +
               std::to_string(static_cast<int>(plan.estimate_us)) + " us)";
    res_ = launch_(args_, tile_, cluster_, act_, nullptr, false);
  }
  void run(hipStream_t st) override { launch_(args_, tile_, cluster_, act_, st, true); }
  Resources resources() const override { return res_; }
  std::string explain() const override { return explain_; }

 private:
  Act act_;
  Resources (*launch_)(gemm::WgmmaArgs&, int, int, Act, hipStream_t, bool);
  gemm::WgmmaArgs args_{};
  int tile_ = 0, cluster_ = 1;
  DeviceBuffer ws_, counters_;
  Resources res_;
  std::string explain_;
};

}  // namespace

// The Hopper path of `tensor`: wgmma + TMA (wgmma_sm90_kernel.hpp). Available where this build carries
// sm_90a code (BWPROF_HAVE_SM90A) and the device is sm_90. It fits where the copy engine can address A and B:
// 16-byte aligned starts and rows (lda, ldb multiples of 8); any M, N, K (the copy engine fills
// what lies past them with zeros, the epilogue stores inside C only, at any ldc). Small M too:
// rows past M arrive as zeros, and the deep ring keeps a short, K-long loop fed where mma.sync
// waited. Operands that do not fit can be copied into aligned scratch first (pad.hip).
bool gemm::wgmma_available(GpuBackend& g) {
#if defined(BWPROF_HAVE_SM90A)
  return g.info().arch == "sm_90";
#else
  (void)g;
  return false;
#endif
}

bool gemm::tma_addressable(const void* p, std::int64_t ld) {
  return on16(p) && ld % 8 == 0;
}

bool gemm::wgmma_fits(GpuBackend& g, const Shape& s, const void* A, const void* B, const void* C) {
  (void)C;
  return wgmma_available(g) && tma_addressable(A, s.lda) && tma_addressable(B, s.ldb);
}

std::unique_ptr<GemmRunner> gemm::make_wgmma_sm90(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                  void* C, const void* bias, Act act, int tile, std::int64_t splits) {
  return std::make_unique<WgmmaRunner>(g, dtype, s, A, B, C, bias, act, tile, splits);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
