// The `tensor` GEMM on NVIDIA matrix units (sm_80+) with mma.sync m16n8k16: the runner, which
// chooses the tile, how rows reach shared memory and the K split (choice.hpp's mma_plan), and
// launches the kernel (mma_sm80_kernel.hpp) through its tile's launcher (mma_sm80.hpp). Hopper builds with sm_90a code take wgmma_sm90.hip instead where its
// operands allow (dispatch.hip).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <string>

#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "gemm/engines.hpp"
#include "gemm/mma_sm80.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

// The launcher of a tile (choice.hpp's shapes: 128x128, 8 warps of 64x32; 64x64, 4 warps of 32x32;
// 16x128, 4 warps of 16x32, for M <= 16, where the time is B's bytes).
gemm::MmaLauncher launcher(bool bf16, const gemm::MmaTileShape& t) {
  if (t.bm == 16) return bf16 ? gemm::mma_bf16_16x128 : gemm::mma_f16_16x128;
  if (t.bm == 64) return bf16 ? gemm::mma_bf16_64x64 : gemm::mma_f16_64x64;
  return bf16 ? gemm::mma_bf16_128x128 : gemm::mma_f16_128x128;
}

class MmaRunner final : public GemmRunner {
 public:
  MmaRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act,
            const gemm::MmaTileShape* tile, std::int64_t splits)
      : bf16_(dt == DType::kBF16), act_(act), args_{A, B, bias, C, nullptr, nullptr, s.M, s.N, s.K, s.lda, s.ldb, s.ldc, 0, 1} {
    gemm::check_int_sizes(s);
    int dev = 0, most = 0;
    BWPROF_GPU_CHECK(hipGetDevice(&dev));
    BWPROF_GPU_CHECK(hipDeviceGetAttribute(&most, hipDeviceAttributeSharedMemPerBlockOptin, dev));
    const std::int64_t sms = g.sm_count();
    const gemm::Operands o{s.M,          s.N,          s.K,           s.lda,        s.ldb, s.ldc,
                           gemm::on16(A), gemm::on16(B), gemm::on128(A), gemm::on128(B)};
    // The 64x64 tile's blocks an SM with a load, as the runtime reports them for its kernel.
    auto small_per_sm = [&](int load) {
      return launcher(bf16_, gemm::kMma64x64)(args_, load, act_, nullptr, false).runtime_blocks_per_sm;
    };
    const gemm::MmaPlan plan = gemm::mma_plan(o, sms, most, small_per_sm, tile, splits);
    if (!plan.fits)
      BWPROF_INVALID("tile: mma.sync's " + std::to_string(tile->bm) + "x" + std::to_string(tile->bn) + " tile needs " +
                     std::to_string(gemm::mma_smem_bytes(*tile, plan.load)) +
                     " bytes of shared memory a block, this GPU has " + std::to_string(most));
    launch_ = launcher(bf16_, plan.tile), load_ = plan.load;
    args_.split_len = plan.split_len, args_.splits = plan.splits;
    if (plan.splits > 1) {
      acc_ = gemm::split_accumulator(s.M, s.N);
      // The last block of each tile finishes it (a count a tile, within the scratch choice.hpp reserves).
      const std::int64_t tiles = ((s.M + plan.tile.bm - 1) / plan.tile.bm) * ((s.N + plan.tile.bn - 1) / plan.tile.bn);
      tile_count_ = DeviceBuffer(static_cast<std::size_t>(tiles) * sizeof(int), "GEMM split-K tile counts");
      tile_count_.fill(0);
      args_.acc = acc_.get<float>(), args_.counts = tile_count_.get<int>();
    }
    static const char* const kLoads[] = {"", " unaligned (realigned in shared memory)", " unaligned (registers)"};
    // (Before sm_90 the four columns go as four atomics after the swap: no vector reduction.)
    const bool vector_red = sm_version(g.info().arch) >= 90;
    explain_ = "mma.sync " + std::to_string(plan.tile.bm) + "x" + std::to_string(plan.tile.bn) + kLoads[load_] +
               " splits " + std::to_string(plan.splits) +
               (plan.splits > 1 ? (vector_red ? " vector adds" : " quad adds") : "");
    res_ = launch_(args_, load_, act_, nullptr, false);  // raises the shared-memory limit once, outside any timing
  }
  void run(hipStream_t st) override { launch_(args_, load_, act_, st, true); }
  Resources resources() const override { return res_; }
  std::string explain() const override { return explain_; }

 private:
  bool bf16_;
  Act act_;
  gemm::MmaArgs args_;
  gemm::MmaLauncher launch_ = nullptr;
  int load_ = 0;
  DeviceBuffer tile_count_;
  DeviceBuffer acc_;
  Resources res_;
  std::string explain_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_mma_sm80(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                void* C, const void* bias, Act act, const MmaTileShape* tile,
                                                std::int64_t splits) {
  return std::make_unique<MmaRunner>(g, dtype, s, A, B, C, bias, act, tile, splits);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
