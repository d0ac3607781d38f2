// The FP16 `tiled` Q4_0 matmul on NVIDIA matrix units (sm_80+): W re-packed once into the mma's
// fragment order (mma_sm80.hpp), then one of its kernels, chosen for the shape, per 8 rows of X.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/mma_sm80.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// The tensor-core kernel's shape: warps splitting K per 16-row tile, chunks in flight per warp.
// Fastest of 11 shapes on an H200 for 14336x4096, 4096x14336 (M = 1) and 14336x4096 (M = 8).
constexpr int kMmaWarps = 8;
constexpr int kMmaLoads = 4;
// The software-pipelined kernel (mma_sm80.hpp): X staged in shared memory for up to kRingMaxXRows
// rows of X taking up to kRingMaxXBytes (4 chunks in flight per warp), else X in the ring (2 chunks).
constexpr int kRingMaxXRows = 2;
constexpr std::size_t kRingMaxXBytes = 48 * 1024;

class MmaMatmul final : public Q4MmaMatmul {
 public:
  MmaMatmul(GpuBackend& g, const Problem& p, const std::uint8_t* w) : g_(g), N_(p.i("N")), K_(p.i("K")) {
    // Re-pack once into the matrix units' fragment order (mma_sm80.hpp), tiles in parallel.
    const std::int64_t N = N_, K = K_;
    HostBytes quants(q4_frag_quant_bytes(N, K), "re-packed Q4_0 quants");
    HostBytes scales(q4_frag_scale_bytes(N, K), "re-packed Q4_0 scales");
    parallel_for(q4_frag_tiles(N), 16, [&](std::size_t lo, std::size_t hi) {
      q4_frag_pack(w, N, K, lo, hi, quants.data(), scales.data());
    });
    w_ = DeviceBuffer::from(quants, "re-packed Q4_0 quants");
    scales_ = DeviceBuffer::from(scales, "re-packed Q4_0 scales");
    // Which ring kernel for 1 or 2 rows of X whose X fits in shared memory: q4_ring_choice
    // (q4_0.hpp) from the grid's fill; more rows take the ring with X in registers (kRingX).
    const int m8 = static_cast<int>(std::min<std::int64_t>(8, p.i("M")));
    const std::size_t x_bytes = q4_x_smem_bytes(m8, p.i("K"));
    path_ = MmaPath::kRingX;
    if (m8 <= kRingMaxXRows && x_bytes <= kRingMaxXBytes) {
      ring_smem_ = static_cast<int>(x_bytes);
      const std::int64_t tiles = static_cast<std::int64_t>(q4_frag_tiles(p.i("N"))), sms = g.sm_count();
      path_ = MmaPath::kRingS4;
      const std::int64_t resident = std::int64_t{dispatch(nullptr, 0, 0, nullptr).runtime_blocks_per_sm} * sms;
      path_ = knob_path(q4_ring_choice(tiles, sms, resident, p.i("K")));
    }
    // A tuning knob for benchmarks: BWPROF_Q4_KERNEL=tile selects the round-based kernel;
    // ring<W>x<U> (ring4x4, ring8x4, ring4x8, ring8x8, ring16x4) a ring kernel with X in shared
    // memory, W warps a tile, U chunks in flight a warp, where X fits there (else the choice above),
    // and with a "t2" suffix (ring4x4t2, ring8x4t2) two tiles a block; ringx<W>x<U> (ringx8x2,
    // ringx4x4, ringx8x4) a ring kernel with X loaded into registers with its chunk.
    if (const char* e = std::getenv("BWPROF_Q4_KERNEL")) {
      const std::string k = e;
      const MmaPath forced = k.empty() ? path_ : knob_path(k);
      if (forced == MmaPath::kNone) BWPROF_INVALID("BWPROF_Q4_KERNEL: unknown kernel '" + k + "' (" + knob_names() + ")");
      const bool x_in_smem = forced != MmaPath::kTile && forced != MmaPath::kRingX && forced != MmaPath::kRingX4U4 &&
                             forced != MmaPath::kRingX8U4;
      if (!x_in_smem || ring_smem_ > 0) path_ = forced;
    }
    res_ = dispatch(nullptr, 0, 0, nullptr);
  }
  void run(const __half* x, __half* y, int M, hipStream_t stream) override {
    const int N = static_cast<int>(N_), K = static_cast<int>(K_);
    // Up to 8 rows of X per pass are the mma's 8 columns.
    for (int m0 = 0; m0 < M; m0 += 8) dispatch(x + static_cast<std::size_t>(m0) * K,
                                               y + static_cast<std::size_t>(m0) * N, std::min(8, M - m0), stream);
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul_mma");
  }
  Resources resources() const override { return res_; }

 private:
  // kRingS4 / kRingS8 / kRingS16: X in shared memory, 4, 8 or 16 warps a tile (U8: 8 chunks in
  // flight a warp, else 4; T2: two tiles a block); kRingX: X in registers (8 warps, 2 chunks; X4U4,
  // X8U4: 4 or 8 warps, 4 chunks).
  enum class MmaPath { kNone, kTile, kRingS4, kRingS8, kRingS4U8, kRingS8U8, kRingS16, kRingS4T2, kRingS8T2, kRingX,
                       kRingX4U4, kRingX8U4 };
  // The kernels by their BWPROF_Q4_KERNEL names (q4_ring_choice answers in these names too).
  struct Knob { const char* name; MmaPath path; };
  static constexpr Knob kKnob[] = {
      {"tile", MmaPath::kTile},          {"ring4x4", MmaPath::kRingS4},     {"ring8x4", MmaPath::kRingS8},
      {"ring4x8", MmaPath::kRingS4U8},   {"ring8x8", MmaPath::kRingS8U8},   {"ring16x4", MmaPath::kRingS16},
      {"ring4x4t2", MmaPath::kRingS4T2}, {"ring8x4t2", MmaPath::kRingS8T2}, {"ringx8x2", MmaPath::kRingX},
      {"ringx4x4", MmaPath::kRingX4U4},  {"ringx8x4", MmaPath::kRingX8U4}};
  static MmaPath knob_path(const std::string& name) {
    for (const auto& n : kKnob)
      if (name == n.name) return n.path;
    return MmaPath::kNone;
  }
  static std::string knob_names() {
    std::string names;
    for (const auto& n : kKnob) names += (names.empty() ? "" : ", ") + std::string(n.name);
    return names;
  }
  // Launches the chosen tensor-core kernel for m rows of X, or (x null) returns its resources.
  Resources dispatch(const __half* x, __half* y, int m, hipStream_t stream) {
    const int N = static_cast<int>(N_), K = static_cast<int>(K_);
    const unsigned tiles = static_cast<unsigned>(q4_frag_tiles(N));
    auto go = [&](auto* fn, int threads, int smem, unsigned tiles_a_block = 1) {
      if (!x) {
        if (smem > 48 * 1024)
          BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize, smem));
        return kernel_resources(fn, threads, smem);
      }
      const unsigned grid = (tiles + tiles_a_block - 1) / tiles_a_block;
      fn<<<grid, threads, smem, stream>>>(w_.get<uint4>(), scales_.get<uint2>(), x, y, m, N, K);
      return Resources{};
    };
    switch (path_) {
      case MmaPath::kRingS4: return go(&bwprof_q4_0_matmul_ring<4, 4, true>, 4 * 32, ring_smem_);
      case MmaPath::kRingS8: return go(&bwprof_q4_0_matmul_ring<8, 4, true>, 8 * 32, ring_smem_);
      case MmaPath::kRingS4U8: return go(&bwprof_q4_0_matmul_ring<4, 8, true>, 4 * 32, ring_smem_);
      case MmaPath::kRingS8U8: return go(&bwprof_q4_0_matmul_ring<8, 8, true>, 8 * 32, ring_smem_);
      case MmaPath::kRingS16: return go(&bwprof_q4_0_matmul_ring<16, 4, true>, 16 * 32, ring_smem_);
      case MmaPath::kRingS4T2: return go(&bwprof_q4_0_matmul_ring<4, 4, true, 2>, 4 * 32, ring_smem_, 2);
      case MmaPath::kRingS8T2: return go(&bwprof_q4_0_matmul_ring<8, 4, true, 2>, 8 * 32, ring_smem_, 2);
      case MmaPath::kRingX: return go(&bwprof_q4_0_matmul_ring<8, 2, false>, 8 * 32, 0);
      case MmaPath::kRingX4U4: return go(&bwprof_q4_0_matmul_ring<4, 4, false>, 4 * 32, 0);
      case MmaPath::kRingX8U4: return go(&bwprof_q4_0_matmul_ring<8, 4, false>, 8 * 32, 0);
      default: return go(&bwprof_q4_0_matmul_mma<kMmaWarps, kMmaLoads, false>, kMmaWarps * 32, 0);
    }
  }

  GpuBackend& g_;
  std::int64_t N_, K_;
  DeviceBuffer w_, scales_;
  MmaPath path_ = MmaPath::kTile;
  int ring_smem_ = 0;
  Resources res_;
};

}  // namespace

std::unique_ptr<Q4MmaMatmul> make_q4_mma_matmul(GpuBackend& g, const Problem& p, const std::uint8_t* w) {
  if (std::atoi(g.info().arch.c_str() + 3) < 80) return nullptr;  // "sm_90"
  return std::make_unique<MmaMatmul>(g, p, w);
}

}  // namespace bwprof
#else   // not BWPROF_CUDA: the tensor-core path is NVIDIA's
#include "q4_0/gpu.hpp"

namespace bwprof {
std::unique_ptr<Q4MmaMatmul> make_q4_mma_matmul(GpuBackend&, const Problem&, const std::uint8_t*) { return nullptr; }
}  // namespace bwprof
#endif  // BWPROF_CUDA
