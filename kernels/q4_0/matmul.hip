// Q4_0 matrix-vector / small-batch product on the GPU, dequantized on the fly: `llama` reads
// llama.cpp's row layout (18-byte blocks, 2-byte aligned); `tiled` reads a layout re-packed once at
// load time: for FP16 on NVIDIA (sm_80+) the matrix units' fragment order (matmul_mma_sm80.hip),
// otherwise each row's 16-byte quant groups aligned for 16-byte loads, its scales apart.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// Y[m, n] = sum_k X[m, k] W[n, k] for MB rows of X at once. A warp takes kRows rows of W and
// issues the loads of all their quants before decoding any (more bytes in flight per warp, and
// each piece of X read once for both rows); X comes through the L1 cache (staging it in shared
// memory as FP32 made every lane's 16-byte reads land in the same banks: 4x slower on the H100).
constexpr int kMatBlock = 256;
constexpr int kQ4Unroll = 4;
constexpr int kRows = 2;
template <class T, int MB, bool TILED>
__global__ void __launch_bounds__(kMatBlock) bwprof_q4_0_matmul(const unsigned char* __restrict__ w,
                                                                const __half* __restrict__ scales,
                                                                const T* __restrict__ x, T* __restrict__ y,
                                                                int M, int N, int K) {
  constexpr int V = Elems<T>::kVec;
  const int warps = blockDim.x / warpSize;
  const int n0 = (blockIdx.x * warps + threadIdx.x / warpSize) * kRows;
  const int lane = threadIdx.x % warpSize;
  if (n0 >= N) return;
  const int nb = K / 32;
  float acc[kRows][MB];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) acc[r][m] = 0.f;
  for (int base = lane; base < nb; base += warpSize * kQ4Unroll) {
    unsigned qw[kRows][kQ4Unroll][4];
    float d[kRows][kQ4Unroll];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int u = 0; u < kQ4Unroll; ++u) {
        const int blk = base + u * warpSize;
        if (blk >= nb || n0 + r >= N) continue;
        const std::size_t at = static_cast<std::size_t>(n0 + r) * nb + blk;
        if (TILED) {
          const uint4 qv = reinterpret_cast<const uint4*>(w)[at];
          qw[r][u][0] = qv.x, qw[r][u][1] = qv.y, qw[r][u][2] = qv.z, qw[r][u][3] = qv.w;
          d[r][u] = __half2float(scales[at]);
        } else {
          d[r][u] = load_llama_block(w + at * kQ4BlockBytes, qw[r][u]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kQ4Unroll; ++u) {
      const int blk = base + u * warpSize;
      if (blk >= nb) continue;
#pragma unroll
      for (int m = 0; m < MB; ++m) {
        if (m >= M) break;
        float xf[32];
        const uint4* xv = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(m) * K + blk * 32);
#pragma unroll
        for (int i = 0; i < 32 / V; ++i) unpack<T>(xv[i], xf + i * V);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float s = 0.f;
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const unsigned lo = qw[r][u][i] & 0x0f0f0f0fu, hi = (qw[r][u][i] >> 4) & 0x0f0f0f0fu;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
              s += xf[4 * i + b] * nibble_minus_8(lo, b);
              s += xf[4 * i + b + 16] * nibble_minus_8(hi, b);
            }
          }
          acc[r][m] += s * d[r][u];  // the block's scale, once per block
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      if (m >= M) break;
      const float s = warp_sum(acc[r][m]);
      if (lane == 0 && n0 + r < N) y[static_cast<std::size_t>(m) * N + n0 + r] = from_f<T>(s);
    }
  }
}

class Q4MatmulGpu final : public KernelInstance {
 public:
  Q4MatmulGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_matmul_data(p)) {
    for (const char* n : {"M", "N", "K"})
      if (p.i(n) > 2147483647) throw InvalidArgument(std::string(n) + ": at most 2^31-1 on the GPU");
    tiled_ = p.variant == "tiled";
    x_ = DeviceBuffer::from(host_.X, "activations X");
    y_ = DeviceBuffer::from(host_.Y, "output Y");
    if (tiled_ && p.dtype == DType::kF16) mma_ = make_q4_mma_matmul(g, p, host_.W.data());
    if (mma_) {
      // The tensor-core path holds its own re-packed weights.
    } else if (tiled_) {
      // Re-pack once, as a model loader would: quants of each block 16-byte aligned, scales apart.
      const std::size_t blocks = host_.W.size() / kQ4BlockBytes;
      HostBytes quants(blocks * 16, "re-packed Q4_0 quants"), scales(blocks * 2, "re-packed Q4_0 scales");
      for (std::size_t b = 0; b < blocks; ++b) {
        std::memcpy(scales.data() + 2 * b, host_.W.data() + b * kQ4BlockBytes, 2);
        std::memcpy(quants.data() + 16 * b, host_.W.data() + b * kQ4BlockBytes + 2, 16);
      }
      w_ = DeviceBuffer::from(quants, "re-packed Q4_0 quants");
      scales_ = DeviceBuffer::from(scales, "re-packed Q4_0 scales");
    } else {
      w_ = DeviceBuffer::from(host_.W, "Q4_0 weights");
    }
    warp_ = g.warp_size();
  }
  void launch() override {
    by_dtype(p_.dtype, [&](auto t) { run<typename decltype(t)::type>(); });
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.Y);
    return q4_matmul_check(host_, p_);
  }
  // The matrix units' kernel by name where it runs; else the vector units' (one per rows of X).
  std::string explain() const override { return mma_ ? mma_->explain() : ""; }
  Resources resources() const override {
    if (mma_) return mma_->resources();
    return by_dtype(p_.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      return tiled_ ? kernel_resources(bwprof_q4_0_matmul<T, 1, true>, kMatBlock)
                    : kernel_resources(bwprof_q4_0_matmul<T, 1, false>, kMatBlock);
    });
  }

 private:
  static int mb_for(int m) { return m == 1 ? 1 : m == 2 ? 2 : m <= 4 ? 4 : 8; }
  template <class T, int MB>
  void launch_mb(const T* x, T* y, int m) {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const int rows = kMatBlock / warp_ * kRows;
    const unsigned grid = (N + rows - 1) / rows;
    if (tiled_)
      bwprof_q4_0_matmul<T, MB, true><<<grid, kMatBlock, 0, g_.stream()>>>(
          w_.get<unsigned char>(), scales_.get<__half>(), x, y, m, N, K);
    else
      bwprof_q4_0_matmul<T, MB, false><<<grid, kMatBlock, 0, g_.stream()>>>(w_.get<unsigned char>(), nullptr, x, y, m, N, K);
  }
  template <class T>
  void run() {
    const int M = static_cast<int>(p_.i("M")), N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    if (mma_) {  // FP16 only (BF16 takes the vector-unit tiled kernel)
      mma_->run(x_.get<__half>(), y_.get<__half>(), M, g_.stream());
      return;
    }
    for (int m0 = 0; m0 < M; m0 += 8) {  // rows of X in groups of up to 8, each group one pass over W
      const int m = std::min(8, M - m0);
      const T* x = x_.get<T>() + static_cast<std::size_t>(m0) * K;
      T* y = y_.get<T>() + static_cast<std::size_t>(m0) * N;
      switch (mb_for(m)) {
        case 1: launch_mb<T, 1>(x, y, m); break;
        case 2: launch_mb<T, 2>(x, y, m); break;
        case 4: launch_mb<T, 4>(x, y, m); break;
        default: launch_mb<T, 8>(x, y, m);
      }
    }
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul");
  }

  GpuBackend& g_;
  Problem p_;
  Q4MatmulData host_;
  DeviceBuffer x_, y_, w_, scales_;
  bool tiled_ = false;
  int warp_ = 32;
  std::unique_ptr<Q4MmaMatmul> mma_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4MatmulGpu>(as_gpu(b), p);
}

}  // namespace bwprof
