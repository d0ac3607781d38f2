// The `tensor` GEMM on NVIDIA matrix units (sm_80+) with mma.sync m16n8k16: the runner, which
// chooses the tile, how rows reach shared memory and the K split, and launches the kernel
// (mma_sm80_kernel.hpp). Hopper builds with sm_90a code take wgmma_sm90.hip instead where its
// operands allow (dispatch.hip).
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdint>
#include <string>

#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "bwprof/knobs.hpp"
#include "gemm/engines.hpp"
#include "gemm/mma_sm80_kernel.hpp"
#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// Tile shapes: large (128x256, 8 warps of 64x64), medium (128x128, 8 warps of 64x32), small (64x64,
// 4 warps of 32x32), skinny (16x128, 4 warps of 16x32: M <= 16, a matrix-vector product in all but
// name, where the time is B's bytes); medium where its grid fills the GPU, else small. K is split
// over blocks where the tiles alone would leave the GPU idle (few rows and columns, a long K).
enum class MmaTile { kLarge, kMedium, kSmall, kSkinny };

class MmaRunner final : public GemmRunner {
 public:
  MmaRunner(GpuBackend& g, DType dt, Shape s, const void* A, const void* B, void* C, const void* bias, Act act)
      : bf16_(dt == DType::kBF16), s_(s), A_(A), B_(B), C_(C), bias_(bias), act_(act) {
    gemm::check_int_sizes(s);
    const bool aligned = s.K % 8 == 0 && s.N % 8 == 0 && s.lda % 8 == 0 && s.ldb % 8 == 0 && s.ldc % 2 == 0;
    const bool bases16 = gemm::on16(A) && gemm::on16(B);
    load_ = aligned && bases16 ? kLoadAsync : bases16 ? kLoadRealign : kLoadRegs;
    // A knob for benchmarks and tests: BWPROF_GEMM_UNALIGNED=regs loads unaligned rows through registers.
    if (knob_choice("BWPROF_GEMM_UNALIGNED", {"regs", "realign"}) == 0 && load_ == kLoadRealign) load_ = kLoadRegs;
    const std::int64_t sms = g.sm_count();
    auto tiles = [&](int bm, int bn) { return ((s.M + bm - 1) / bm) * ((s.N + bn - 1) / bn); };
    // Measured on an H100 at 4096^3: 128x128 ahead of 128x256 (one block an SM) and 64x64.
    tile_ = s.M <= 16 ? MmaTile::kSkinny : tiles(128, 128) >= sms ? MmaTile::kMedium : MmaTile::kSmall;
    // A tuning knob for benchmarks: BWPROF_GEMM_TILE=large|medium|small|skinny overrides the choice.
    static const char* const kTiles[] = {"large", "medium", "small", "skinny"};
    const std::string asked = gemm::tile_knob();
    bool named = false;  // an mma.sync tile asked for by name
    for (int t = 0; t < 4; ++t)
      if (asked == kTiles[t]) tile_ = static_cast<MmaTile>(t), named = true;
    // The block's shared memory must fit this GPU's limit (163 KB on an A100, 99 KB on sm_86/89;
    // realigned, the 128x256 tile takes 209 KB and 128x128 143 KB): else rows off 16 bytes go through
    // registers, and where that does not fit either, the chosen tile gives way to 64x64 (a tile asked
    // for by name is an error instead).
    {
      int dev = 0, most = 0;
      BWPROF_GPU_CHECK(hipGetDevice(&dev));
      BWPROF_GPU_CHECK(hipDeviceGetAttribute(&most, hipDeviceAttributeSharedMemPerBlockOptin, dev));
      auto need = [&] {
        sizing_ = true;
        const int bytes = dispatch(nullptr, false).shared_mem_per_block;
        sizing_ = false;
        return bytes;
      };
      if (load_ == kLoadRealign && need() > most) load_ = kLoadRegs;
      if (need() > most) {
        if (named)
          BWPROF_INVALID("BWPROF_GEMM_TILE=" + asked + ": the mma.sync tile needs " + std::to_string(need()) +
                         " bytes of shared memory a block, this GPU has " + std::to_string(most));
        tile_ = MmaTile::kSmall;
      }
    }
    const int bm = tile_ == MmaTile::kSkinny ? 16 : tile_ == MmaTile::kSmall ? 64 : 128;
    const int bn = tile_ == MmaTile::kLarge ? 256 : tile_ == MmaTile::kSmall ? 64 : 128;
    // Split K until about two blocks an SM are under way, each split keeping at least 4 steps of 64;
    // the 64x64 tile as many ways as one wave of the GPU's resident blocks holds. H100, 2026-11-28
    // (vector adds), M=33 N=4095 K=4097: 5 ways (320 blocks) 34.4-34.9 us, 6 (384 of 396 resident)
    // 31.8-31.9, 7 (two waves) 41.1; N=4097 K=4095: 5 ways 34.1-34.3, 6 32.5.
    const std::int64_t t = tiles(bm, bn), ksteps = (s.K + 63) / 64;
    std::int64_t want = 2 * sms, splits = 1;
    if (tile_ == MmaTile::kSmall) {
      const int per_sm = dispatch(nullptr, false).runtime_blocks_per_sm;
      if (per_sm > 0) want = sms * per_sm;
    }
    const std::int64_t ways = tile_ == MmaTile::kSmall ? want / t : (want + t - 1) / t;
    if (t < want) splits = std::max<std::int64_t>(1, std::min<std::int64_t>({ways, ksteps / 4, gemm::kMaxSplits}));
    if (const auto n = knob_int("BWPROF_GEMM_SPLITS", 1, 65535))  // benchmark knob
      splits = std::min<std::int64_t>(*n, std::min<std::int64_t>(ksteps, 65535));
    split_len_ = static_cast<int>((ksteps + splits - 1) / splits * 64);
    splits_ = static_cast<int>((s.K + split_len_ - 1) / split_len_);
    if (splits_ > 1) acc_ = gemm::split_accumulator(s.M, s.N);
    // The splits finished by the last block of each tile (a count a tile, within the scratch
    // choice.hpp reserves) rather than by split_k.hip's second kernel. H100, 2026-11-23, gemm_sweep
    // --max-m 16, the 16-row tile: every point faster, e.g. M=16 N=4096 K=4096 23.8 -> 21.1 us, M=7
    // 21.8 -> 19.0, M=16 N=1000 K=11008 19.7 -> 17.7, M=1 N=4096 20.3 -> 18.2; 2026-11-28, the 64x64
    // tile at M=33: N=4096 K=4096 28.0 -> 24.8, N=4095 K=4097 (realigned) 38.7 -> 36.9, N=11007
    // K=4096 81.2 -> 73.0. BWPROF_GEMM_SPLIT_FINISH=last|kernel forces either (a knob for benchmarks).
    if (const auto f = knob_choice("BWPROF_GEMM_SPLIT_FINISH", {"last", "kernel"})) finish_last_ = *f == 0;
    // Partial sums four columns a request (red.global.add.v4.f32 on sm_90+; the accumulator's rows
    // start on 16 bytes whatever N) rather than one element an atomic. H100, 2026-11-28, the 16-row
    // tile: M=16 N=K=4096 20.9 -> 19.0 us, M=16 N=1000 K=11008 18.0 -> 15.7.
    // BWPROF_GEMM_SPLIT_ADD=vector|scalar forces either (a benchmark knob).
    if (const auto a = knob_choice("BWPROF_GEMM_SPLIT_ADD", {"vector", "scalar"})) add4_ = *a == 0;
    if (splits_ > 1 && finish_last_) {
      tile_count_ = DeviceBuffer(static_cast<std::size_t>(tiles(bm, bn)) * sizeof(int), "GEMM split-K tile counts");
      tile_count_.fill(0);
    }
    sms_ = static_cast<int>(sms);
    static const char* const kNames[] = {"large", "medium", "small", "skinny"};
    static const char* const kLoads[] = {"", " unaligned (realigned in shared memory)", " unaligned (registers)"};
    // (Before sm_90 the four columns go as four atomics after the swap: no vector reduction.)
    const bool vector_red = sm_version(g.info().arch) >= 90;
    gemm::explain(std::string("mma.sync ") + kNames[static_cast<int>(tile_)] + kLoads[load_] +
                  " splits " + std::to_string(splits_) + (tile_count_.get() ? " last-block finish" : "") +
                  (splits_ > 1 && add4_ ? (vector_red ? " vector adds" : " quad adds") : ""));
    res_ = dispatch(nullptr, false);  // raises the shared-memory limit once, outside any timing
  }
  void run(hipStream_t st) override { dispatch(st, true); }
  Resources resources() const override { return res_; }

 private:
  Resources dispatch(hipStream_t st, bool launch) {
    switch (tile_) {
      case MmaTile::kLarge: return by_align<128, 256, 64, 64, 3, 64>(st, launch);
      case MmaTile::kMedium: return by_align<128, 128, 64, 32, 3, 64>(st, launch);
      case MmaTile::kSkinny: return by_align<16, 128, 16, 32, 4, 64>(st, launch);
      default: return by_align<64, 64, 32, 32, 3, 64>(st, launch);
    }
  }
  template <int BM, int BN, int WM, int WN, int ST, int BK>
  Resources by_align(hipStream_t st, bool launch) {
    switch (load_) {
      case kLoadAsync: return go<BM, BN, WM, WN, ST, BK, kLoadAsync>(st, launch);
      case kLoadRealign: return go<BM, BN, WM, WN, ST, BK, kLoadRealign>(st, launch);
      default: return go<BM, BN, WM, WN, ST, BK, kLoadRegs>(st, launch);
    }
  }
  template <int BM, int BN, int WM, int WN, int ST, int BK, int AL>
  Resources go(hipStream_t st, bool launch) {
    return bf16_ ? go_t<bf16, BM, BN, WM, WN, ST, BK, AL>(st, launch) : go_t<__half, BM, BN, WM, WN, ST, BK, AL>(st, launch);
  }
  template <class T, int BM, int BN, int WM, int WN, int ST, int BK, int AL>
  Resources go_t(hipStream_t st, bool launch) {
    using Cfg = MmaConfig<BM, BN, WM, WN, ST, BK, AL>;
    if (sizing_) {  // the shared memory a block alone (the constructor's fit to this GPU)
      Resources r;
      r.shared_mem_per_block = Cfg::kSmemBytes;
      return r;
    }
    const bool fused = tile_count_.get() != nullptr;
    return gemm::with_act(splits_ > 1 && !fused ? Act::kNone : act_, [&](auto a) {  // split: the finishing kernel's
      auto* fn = &bwprof_gemm_mma<T, BM, BN, WM, WN, ST, BK, AL, decltype(a)::value>;
      if (!launch) {
        BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn),
                                             hipFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
        return kernel_resources(fn, Cfg::kThreads, Cfg::kSmemBytes);
      }
      const dim3 grid(static_cast<unsigned>((s_.N + BN - 1) / BN), static_cast<unsigned>((s_.M + BM - 1) / BM),
                      static_cast<unsigned>(splits_));
      fn<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(static_cast<const T*>(A_), static_cast<const T*>(B_),
                                                       static_cast<const T*>(bias_), static_cast<T*>(C_),
                                                       acc_.get<float>(), fused ? tile_count_.get<int>() : nullptr,
                                                       int(s_.M), int(s_.N), int(s_.K), int(s_.lda),
                                                       int(s_.ldb), int(s_.ldc), split_len_, int(add4_));
      BWPROF_CHECK_LAUNCH("bwprof_gemm_mma");
      if (splits_ > 1 && !fused)
        gemm::split_finish(bf16_ ? DType::kBF16 : DType::kF16, act_, acc_.get<float>(), bias_, C_, s_.M, s_.N, s_.ldc,
                           sms_, st);
      return Resources{};
    });
  }
  bool bf16_;
  Shape s_;
  const void* A_;
  const void* B_;
  void* C_;
  const void* bias_;
  Act act_;
  int load_ = kLoadAsync;
  bool sizing_ = false;
  MmaTile tile_ = MmaTile::kSmall;
  int splits_ = 1, split_len_ = 0, sms_ = 1;
  bool finish_last_ = true, add4_ = true;
  DeviceBuffer tile_count_;
  DeviceBuffer acc_;
  Resources res_;
};

}  // namespace

std::unique_ptr<GemmRunner> gemm::make_mma_sm80(GpuBackend& g, DType dtype, Shape s, const void* A, const void* B,
                                                void* C, const void* bias, Act act) {
  return std::make_unique<MmaRunner>(g, dtype, s, A, B, C, bias, act);
}

}  // namespace bwprof
#endif  // BWPROF_CUDA
