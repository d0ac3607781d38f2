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
#include "bwprof/knobs.hpp"
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
    // Which ring kernel for 1 or 2 rows of X whose X fits in shared memory: q4_ring_choice
    // (q4_0.hpp) from the grid's fill; more rows take the ring with X in registers, 2 chunks a warp
    // (ringx8x2rl: the lean records form of ringx8x2, faster than it at M = 1 on an H100 in both
    // passes at both shapes, 8.32 against 8.54 us and 17.18 against 17.47, gpu-q4-fast at 75fba84;
    // not measured at M = 8). Every kernel chosen here reads the weights as records.
    const int m8 = static_cast<int>(std::min<std::int64_t>(8, p.i("M")));
    const std::size_t x_bytes = q4_x_smem_bytes(m8, p.i("K"));
    kernel_ = &knob("ringx8x2rl");
    if (m8 <= kRingMaxXRows && x_bytes <= kRingMaxXBytes) {
      ring_smem_ = static_cast<int>(x_bytes);
      const std::int64_t tiles = static_cast<std::int64_t>(q4_frag_tiles(p.i("N")));
      // How many blocks of the X-in-registers ring and of the 16-warp ring an SM holds at once: past
      // that many tiles an SM their grids run in two waves.
      const Knob& rx = knob("ringx8x4rl");
      const Knob& r16 = knob("ring16x2rle");
      const Knob& fl = knob("flood32x2");
      const int ringx_per_sm = kernel_resources(rx.fn, rx.warps * 32).runtime_blocks_per_sm;
      allow_smem(r16);  // (else the occupancy answer is 0 where X and its own pass 48 KB)
      const int ring16_per_sm = kernel_resources(r16.fn, r16.warps * 32, ring_smem_).runtime_blocks_per_sm;
      const int flood_per_sm = kernel_resources(fl.fn, fl.warps * 32).runtime_blocks_per_sm;
      kernel_ = &knob(q4_ring_choice(tiles, g.sm_count(), p.i("K"), m8, ringx_per_sm, ring16_per_sm, flood_per_sm));
    }
    // A tuning knob for benchmarks: BWPROF_Q4_KERNEL names any kernel of kKnobs; one that stages X
    // in shared memory runs only where X fits there, and a one-row kernel only for one row of X and a
    // row it takes in one round (else the choice above stays).
    std::vector<std::string> names;
    for (const auto& k : kKnobs) names.push_back(k.name);
    if (const auto i = knob_choice("BWPROF_Q4_KERNEL", names); i && (!kKnobs[*i].x_smem || ring_smem_ > 0) &&
                                                               (!kKnobs[*i].one_row || one_row_fits(kKnobs[*i], p)))
      kernel_ = &kKnobs[*i];
    res_ = dispatch(nullptr, 0, 0, nullptr);
    // Re-pack once into the matrix units' fragment order (mma_sm80.hpp), tiles in parallel: as one
    // stream of records (the library's layout: every kernel it chooses reads them so), or quants and
    // scales in two arrays for the knob's kernels without the `r`.
    const std::int64_t N = N_, K = K_;
    if (kernel_->records) {
      HostBytes recs(q4_frag_tiles(N) * q4_frag_chunks(K) * kQ4RecordBytes, "re-packed Q4_0 records");
      parallel_for(q4_frag_tiles(N), 16, [&](std::size_t lo, std::size_t hi) {
        q4_frag_pack(w, N, K, lo, hi, recs.data(), recs.data() + 512, kQ4RecordBytes, kQ4RecordBytes);
      });
      w_ = DeviceBuffer::from(recs, "re-packed Q4_0 records");
    } else {
      HostBytes quants(q4_frag_quant_bytes(N, K), "re-packed Q4_0 quants");
      HostBytes scales(q4_frag_scale_bytes(N, K), "re-packed Q4_0 scales");
      parallel_for(q4_frag_tiles(N), 16, [&](std::size_t lo, std::size_t hi) {
        q4_frag_pack(w, N, K, lo, hi, quants.data(), scales.data());
      });
      w_ = DeviceBuffer::from(quants, "re-packed Q4_0 quants");
      scales_ = DeviceBuffer::from(scales, "re-packed Q4_0 scales");
    }
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

 private:
  // The tensor-core kernels by their BWPROF_Q4_KERNEL names (q4_ring_choice answers in these names
  // too): "tile", the round-based kernel; ring<W>x<U>, the ring kernel with X in shared memory, W
  // warps a tile, U chunks in flight a warp; a "t2" suffix: two tiles a block; ringx<W>x<U>: X
  // loaded into registers with its chunk. Suffix "l" (lean): the decode's mask-and-or as one LOP3 and
  // X staged without a division; "r": the weights as one stream of records (a chunk's quants then
  // its scales); "rl": both; "rle": both, and each chunk's quants refilled between its decode and
  // its mma (mma_sm80.hpp's Q4RingOpts). "flood32x2": one row of X, 32 warps a tile with 2 chunks
  // each in one round (bwprof_q4_0_matvec_flood: M = 1 and K <= 4096 only), records, lean decode.
  // "probe-loads-<kernel>", "probe-math-<kernel>": probes that time the kernel's loads without its
  // math and its math without most loads; they do NOT compute the product (their check fails by
  // design) and nothing chooses them.
  using Kernel = void (*)(const uint4*, const uint2*, const __half*, __half*, int, int, int);
  struct Knob {
    const char* name;
    Kernel fn;
    int warps;
    bool x_smem;
    unsigned tiles_a_block;
    bool records;  // the weights as one stream of kQ4RecordBytes records (kQ4Records)
    bool one_row;  // one row of X only, 2 chunks a warp in one round (false where not given)
  };
  // Whether a one-row kernel takes this problem: M = 1 and every chunk of a row in one round.
  static bool one_row_fits(const Knob& k, const Problem& p) {
    return p.i("M") == 1 && static_cast<std::int64_t>(q4_frag_chunks(p.i("K"))) <= 2 * k.warps;
  }
  static constexpr int kL = kQ4Lop3, kR = kQ4Records, kRL = kQ4Records | kQ4Lop3;
  static constexpr int kPL = kQ4ProbeLoads, kPM = kQ4ProbeMath;
  static constexpr Knob kKnobs[] = {
      {"tile", &bwprof_q4_0_matmul_mma<kMmaWarps, kMmaLoads, false>, kMmaWarps, false, 1, false},
      {"ring4x4", &bwprof_q4_0_matmul_ring<4, 4, true>, 4, true, 1, false},
      {"ring8x4", &bwprof_q4_0_matmul_ring<8, 4, true>, 8, true, 1, false},
      {"ring4x8", &bwprof_q4_0_matmul_ring<4, 8, true>, 4, true, 1, false},
      {"ring8x8", &bwprof_q4_0_matmul_ring<8, 8, true>, 8, true, 1, false},
      {"ring16x4", &bwprof_q4_0_matmul_ring<16, 4, true>, 16, true, 1, false},
      {"ring4x4t2", &bwprof_q4_0_matmul_ring<4, 4, true, 2>, 4, true, 2, false},
      {"ring8x4t2", &bwprof_q4_0_matmul_ring<8, 4, true, 2>, 8, true, 2, false},
      {"ringx8x2", &bwprof_q4_0_matmul_ring<8, 2, false>, 8, false, 1, false},
      {"ringx4x4", &bwprof_q4_0_matmul_ring<4, 4, false>, 4, false, 1, false},
      {"ringx8x4", &bwprof_q4_0_matmul_ring<8, 4, false>, 8, false, 1, false},
      // one-LOP3 decode (l), records (r), both (rl)
      {"ring4x4l", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kL>, 4, true, 1, false},
      {"ring8x4l", &bwprof_q4_0_matmul_ring<8, 4, true, 1, kL>, 8, true, 1, false},
      {"ringx8x2l", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kL>, 8, false, 1, false},
      {"ringx8x4l", &bwprof_q4_0_matmul_ring<8, 4, false, 1, kL>, 8, false, 1, false},
      {"ring4x4r", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kR>, 4, true, 1, true},
      {"ring8x4r", &bwprof_q4_0_matmul_ring<8, 4, true, 1, kR>, 8, true, 1, true},
      {"ringx8x2r", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kR>, 8, false, 1, true},
      {"ringx8x4r", &bwprof_q4_0_matmul_ring<8, 4, false, 1, kR>, 8, false, 1, true},
      {"ring4x4rl", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kRL>, 4, true, 1, true},
      {"ring8x4rl", &bwprof_q4_0_matmul_ring<8, 4, true, 1, kRL>, 8, true, 1, true},
      {"ringx8x2rl", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kRL>, 8, false, 1, true},
      {"ringx8x4rl", &bwprof_q4_0_matmul_ring<8, 4, false, 1, kRL>, 8, false, 1, true},
      // 16 warps x 2 chunks, records and lean decode; "e": each chunk's quants refilled between its
      // decode and its mma (kQ4EarlyRefill)
      {"ring16x2rl", &bwprof_q4_0_matmul_ring<16, 2, true, 1, kRL>, 16, true, 1, true},
      {"ring16x2rle", &bwprof_q4_0_matmul_ring<16, 2, true, 1, kRL | kQ4EarlyRefill>, 16, true, 1, true},
      // one row of X, every chunk of a tile in one round (K <= 4096)
      {"flood32x2", &bwprof_q4_0_matvec_flood<32>, 32, false, 1, true, true},
      // probes (no product)
      {"probe-loads-ring4x4", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kPL>, 4, true, 1, false},
      {"probe-loads-ringx8x2", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kPL>, 8, false, 1, false},
      {"probe-loads-ring4x4r", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kPL | kR>, 4, true, 1, true},
      {"probe-loads-ringx8x2r", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kPL | kR>, 8, false, 1, true},
      {"probe-math-ring4x4", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kPM>, 4, true, 1, false},
      {"probe-math-ringx8x2", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kPM>, 8, false, 1, false},
      {"probe-math-ring4x4l", &bwprof_q4_0_matmul_ring<4, 4, true, 1, kPM | kL>, 4, true, 1, false},
      {"probe-math-ringx8x2l", &bwprof_q4_0_matmul_ring<8, 2, false, 1, kPM | kL>, 8, false, 1, false},
      {"probe-loads-ringx8x4r", &bwprof_q4_0_matmul_ring<8, 4, false, 1, kPL | kR>, 8, false, 1, true}};
  static const Knob& knob(const std::string& name) {
    for (const auto& k : kKnobs)
      if (name == k.name) return k;
    BWPROF_INVALID("no Q4_0 kernel named '" + name + "'");  // (a name of this file's own choice)
  }
  // Lets a kernel that stages X in shared memory take as much of it as any instance may stage
  // (kRingMaxXBytes). The default limit is 48 KB less the kernel's own (static) shared memory, so X
  // just under 48 KB failed to launch (ring8x4rl at M = 1, K = 24512: 49088 bytes of X and 4 KB of its
  // own) and the occupancy answer was 0 there. The limit is the function's, shared by every instance:
  // each one sets the same value, so that an instance made later never lowers it under an earlier
  // one's X (tests/cpp/gpu_compute_test.cpp, GpuComputeQ4).
  static void allow_smem(const Knob& k) {
    if (k.x_smem)
      BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(k.fn), hipFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kRingMaxXBytes)));
  }
  // Launches the chosen tensor-core kernel for m rows of X, or (x null) returns its resources.
  Resources dispatch(const __half* x, __half* y, int m, hipStream_t stream) {
    const int N = static_cast<int>(N_), K = static_cast<int>(K_);
    const Knob& k = *kernel_;
    const int threads = k.warps * 32, smem = k.x_smem ? ring_smem_ : 0;
    if (!x) {
      allow_smem(k);
      return kernel_resources(k.fn, threads, smem);
    }
    const unsigned tiles = static_cast<unsigned>(q4_frag_tiles(N));
    const unsigned grid = (tiles + k.tiles_a_block - 1) / k.tiles_a_block;
    k.fn<<<grid, threads, smem, stream>>>(w_.get<uint4>(), k.records ? nullptr : scales_.get<uint2>(), x, y, m, N, K);
    return Resources{};
  }

  GpuBackend& g_;
  std::int64_t N_, K_;
  DeviceBuffer w_, scales_;
  const Knob* kernel_ = nullptr;
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
