// The FP16 `tiled` Q4_0 matmul on NVIDIA matrix units (sm_80+): W re-packed once into the mma's
// fragment order (mma_sm80.hpp), then one of its kernels, chosen for the shape, per 8 rows of X.
#include "common/gpu_runtime.hpp"
#if defined(BWPROF_CUDA)
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/mma_sm80.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// X staged in shared memory (the ring kernels that take it) for up to kRingMaxXRows rows of X
// taking up to kRingMaxXBytes; more rows take the ring with X in registers, 2 chunks a warp.
constexpr int kRingMaxXRows = 2;
constexpr std::size_t kRingMaxXBytes = 48 * 1024;

class MmaMatmul final : public Q4MmaMatmul {
 public:
  MmaMatmul(GpuBackend& g, const Problem& p, const std::uint8_t* w) : g_(g), N_(p.i("N")), K_(p.i("K")) {
    // Which kernel for 1 or 2 rows of X whose X fits in shared memory: q4_ring_choice (q4_0.hpp)
    // from the grid's fill; more rows (or a longer X) take the ring with X in registers, 2 chunks a
    // warp (ringx8x2rl).
    const int m8 = static_cast<int>(std::min<std::int64_t>(8, p.i("M")));
    const std::size_t x_bytes = q4_x_smem_bytes(m8, p.i("K"));
    kernel_ = &kernel("ringx8x2rl");
    if (m8 <= kRingMaxXRows && x_bytes <= kRingMaxXBytes) {
      ring_smem_ = static_cast<int>(x_bytes);
      const std::int64_t tiles = static_cast<std::int64_t>(q4_frag_tiles(p.i("N")));
      // How many blocks of the X-in-registers ring and of the 16-warp ring an SM holds at once: past
      // that many tiles an SM their grids run in two waves.
      const Kernel& rx = kernel("ringx8x4rl");
      const Kernel& r16 = kernel("ring16x2rle");
      const Kernel& fl = kernel("flood32x2");
      const int ringx_per_sm = kernel_resources(rx.fn, rx.warps * 32).runtime_blocks_per_sm;
      allow_smem(r16);  // (else the occupancy answer is 0 where X and its own pass 48 KB)
      const int ring16_per_sm = kernel_resources(r16.fn, r16.warps * 32, ring_smem_).runtime_blocks_per_sm;
      const int flood_per_sm = kernel_resources(fl.fn, fl.warps * 32).runtime_blocks_per_sm;
      kernel_ = &kernel(q4_ring_choice(tiles, g.sm_count(), p.i("K"), m8, ringx_per_sm, ring16_per_sm, flood_per_sm));
    }
    res_ = dispatch(nullptr, 0, 0, nullptr);
    // Re-pack once into the matrix units' fragment order as one stream of records (mma_sm80.hpp),
    // tiles in parallel.
    const std::int64_t N = N_, K = K_;
    HostBytes recs(q4_frag_tiles(N) * q4_frag_chunks(K) * kQ4RecordBytes, "re-packed Q4_0 records");
    parallel_for(q4_frag_tiles(N), 16, [&](std::size_t lo, std::size_t hi) {
      q4_frag_pack(w, N, K, lo, hi, recs.data(), recs.data() + 512, kQ4RecordBytes, kQ4RecordBytes);
    });
    w_ = DeviceBuffer::from(recs, "re-packed Q4_0 records");
  }
  void run(const __half* x, __half* y, int M, hipStream_t stream) override {
    const int N = static_cast<int>(N_), K = static_cast<int>(K_);
    // (The kernel was chosen for the problem's M; a one-row kernel computes only the first row of X.)
    if (kernel_->one_row && M != 1) BWPROF_INVALID("the Q4_0 kernel '" + std::string(kernel_->name) +
                                                   "' was chosen for one row of X, not " + std::to_string(M));
    // Up to 8 rows of X per pass are the mma's 8 columns.
    for (int m0 = 0; m0 < M; m0 += 8) dispatch(x + static_cast<std::size_t>(m0) * K,
                                               y + static_cast<std::size_t>(m0) * N, std::min(8, M - m0), stream);
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul_mma");
  }
  Resources resources() const override { return res_; }
  std::string explain() const override { return kernel_->name; }

 private:
  // The tensor-core kernels by name (q4_ring_choice answers in these names): ring<W>x<U>, the ring
  // kernel with X in shared memory, W warps a tile, U chunks in flight a warp; ringx<W>x<U>: X
  // loaded into registers with its chunk; "rle": each chunk's quants refilled between its decode and
  // its mma (the ring's EARLY); "flood32x2": one row of X, 32 warps a tile with 2 chunks each in one
  // round (bwprof_q4_0_matvec_flood: M = 1 and K <= 4096 only). All read the weights as records with
  // the one-LOP3 decode (the "rl" of the names they had among the kernels measured).
  using Launch = void (*)(const uint4*, const uint2*, const __half*, __half*, int, int, int);
  struct Kernel {
    const char* name;
    Launch fn;
    int warps;
    bool x_smem;
    bool one_row;  // one row of X only, 2 chunks a warp in one round (false where not given)
  };
  static constexpr Kernel kKernels[] = {
      {"ringx8x2rl", &bwprof_q4_0_matmul_ring<8, 2, false, false>, 8, false},
      {"ringx8x4rl", &bwprof_q4_0_matmul_ring<8, 4, false, false>, 8, false},
      {"ring8x4rl", &bwprof_q4_0_matmul_ring<8, 4, true, false>, 8, true},
      {"ring16x2rle", &bwprof_q4_0_matmul_ring<16, 2, true, true>, 16, true},
      {"flood32x2", &bwprof_q4_0_matvec_flood<32>, 32, false, true}};
  static const Kernel& kernel(const std::string& name) {
    for (const auto& k : kKernels)
      if (name == k.name) return k;
    BWPROF_INVALID("no Q4_0 kernel named '" + name + "'");  // (a name of this file's own choice)
  }
  // Lets a kernel that stages X in shared memory take as much of it as any instance may stage
  // (kRingMaxXBytes). The default limit is 48 KB less the kernel's own (static) shared memory, so X
  // just under 48 KB failed to launch (ring8x4rl at M = 1, K = 24512: 49088 bytes of X and 4 KB of its
  // own) and the occupancy answer was 0 there. The limit is the function's, shared by every instance:
  // each one sets the same value, so that an instance made later never lowers it under an earlier
  // one's X (tests/cpp/gpu_compute_test.cpp, GpuComputeQ4).
  static void allow_smem(const Kernel& k) {
    if (k.x_smem)
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(k.fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kRingMaxXBytes)));
  }
  // Launches the chosen tensor-core kernel for m rows of X, or (x null) returns its resources.
  Resources dispatch(const __half* x, __half* y, int m, hipStream_t stream) {
    const int N = static_cast<int>(N_), K = static_cast<int>(K_);
    const Kernel& k = *kernel_;
    const int threads = k.warps * 32, smem = k.x_smem ? ring_smem_ : 0;
    if (!x) {
      allow_smem(k);
      return kernel_resources(k.fn, threads, smem);
    }
    const unsigned grid = static_cast<unsigned>(q4_frag_tiles(N));  // a block a tile
    k.fn<<<grid, threads, smem, stream>>>(w_.get<uint4>(), nullptr, x, y, m, N, K);
    return Resources{};
  }

  GpuBackend& g_;
  std::int64_t N_, K_;
  DeviceBuffer w_;
  const Kernel* kernel_ = nullptr;
  int ring_smem_ = 0;
  Resources res_;
};

}  // namespace

std::unique_ptr<Q4MmaMatmul> make_q4_mma_matmul(GpuBackend& g, const Problem& p, const std::uint8_t* w) {
  if (sm_version(g.info().arch) < 80) return nullptr;
  return std::make_unique<MmaMatmul>(g, p, w);
}

}  // namespace bwprof
#else   // not BWPROF_CUDA: the tensor-core path is NVIDIA's
#include "q4_0/gpu.hpp"

namespace bwprof {
std::unique_ptr<Q4MmaMatmul> make_q4_mma_matmul(GpuBackend&, const Problem&, const std::uint8_t*) { return nullptr; }
}  // namespace bwprof
#endif  // BWPROF_CUDA
