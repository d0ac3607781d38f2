// Q4_0 on the GPU: dequantization to FP16/FP32, and the fused matrix-vector / small-batch product
// in llama.cpp's row layout (18-byte blocks, 2-byte aligned) and in a layout re-packed once at
// load time: for FP16 on NVIDIA (sm_80+), the matrix units' fragment order (q4_0_mma.hpp);
// otherwise each row's 16-byte quant groups aligned for 16-byte loads, its scales apart.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "cpu/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"
#include "q4_0_mma.hpp"

namespace bwprof {

namespace {

using namespace gpu;

// The 32 values of one block from its scale and 16 quant bytes (as four 32-bit words).
__device__ __forceinline__ void decode_q4(const unsigned (&q)[4], float d, float* out) {
#pragma unroll
  for (int w = 0; w < 4; ++w) {
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const unsigned byte = (q[w] >> (8 * b)) & 0xffu;
      out[4 * w + b] = (static_cast<int>(byte & 0x0fu) - 8) * d;
      out[4 * w + b + 16] = (static_cast<int>(byte >> 4) - 8) * d;
    }
  }
}

// q - 8 as an exact float without an integer conversion: 0x4B0000qq is 2^23 + q, and subtracting
// 2^23 + 8 leaves q - 8. Two instructions per value where the CUDA byte permute is available.
__device__ __forceinline__ float nibble_minus_8(unsigned nibbles, int byte) {
#ifdef BWPROF_CUDA
  const unsigned bits = __byte_perm(nibbles, 0x4B000000u, byte | (4 << 4) | (5 << 8) | (7 << 12));
#else
  const unsigned bits = ((nibbles >> (8 * byte)) & 0xffu) | 0x4B000000u;
#endif
  return __uint_as_float(bits) - 8388616.0f;
}

// A block of llama.cpp's layout: 9 halfwords (scale, then the quants), 2-byte aligned.
__device__ __forceinline__ float load_llama_block(const unsigned char* blk, unsigned (&q)[4]) {
  const unsigned short* h = reinterpret_cast<const unsigned short*>(blk);
  unsigned short s[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) s[i] = h[i];
#pragma unroll
  for (int w = 0; w < 4; ++w) q[w] = static_cast<unsigned>(s[1 + 2 * w]) | (static_cast<unsigned>(s[2 + 2 * w]) << 16);
  __half d = *reinterpret_cast<const __half*>(&s[0]);
  return __half2float(d);
}

// Dequantization: the thread block loads its 256 Q4 blocks (4608 bytes) with 16-byte loads into
// shared memory, each thread decodes one, and the block writes the result back as coalesced
// 16-byte stores (a thread writing its own 64 or 128 bytes would scatter every store).
constexpr int kDqBlocks = 256;
template <class T>
__global__ void __launch_bounds__(kDqBlocks) bwprof_q4_0_dequant(const unsigned char* __restrict__ q,
                                                                 T* __restrict__ out, std::size_t blocks) {
  constexpr int V = Elems<T>::kVec;
  constexpr int kVecs = 32 / V;  // 16-byte vectors of one decoded block
  __shared__ uint4 in[kDqBlocks * kQ4BlockBytes / 16];
  __shared__ uint4 staged[kDqBlocks * kVecs];
  const unsigned char* in_bytes = reinterpret_cast<const unsigned char*>(in);
  for (std::size_t first = static_cast<std::size_t>(blockIdx.x) * kDqBlocks; first < blocks;
       first += static_cast<std::size_t>(gridDim.x) * kDqBlocks) {
    const int count = static_cast<int>(blocks - first < kDqBlocks ? blocks - first : kDqBlocks);
    const int in_vecs = (count * kQ4BlockBytes + 15) / 16;
    const uint4* src = reinterpret_cast<const uint4*>(q + first * kQ4BlockBytes);
    const std::size_t total_bytes = blocks * kQ4BlockBytes;
    for (int i = threadIdx.x; i < in_vecs; i += blockDim.x) {
      const std::size_t at = first * kQ4BlockBytes + 16 * static_cast<std::size_t>(i);
      if (at + 16 <= total_bytes) {
        in[i] = src[i];
      } else {  // the buffer's last partial vector
        unsigned char* d = reinterpret_cast<unsigned char*>(&in[i]);
        for (int b = 0; b < 16; ++b) d[b] = at + b < total_bytes ? q[at + b] : 0;
      }
    }
    __syncthreads();
    if (threadIdx.x < count) {
      unsigned qw[4];
      const float d = load_llama_block(in_bytes + threadIdx.x * kQ4BlockBytes, qw);
      float v[32];
      decode_q4(qw, d, v);
#pragma unroll
      for (int i = 0; i < kVecs; ++i) staged[threadIdx.x * kVecs + i] = pack<T>(v + i * V);
    }
    __syncthreads();
    uint4* dst = reinterpret_cast<uint4*>(out + first * 32);
    for (int i = threadIdx.x; i < count * kVecs; i += blockDim.x) dst[i] = staged[i];
    __syncthreads();
  }
}

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

class Q4DequantGpu final : public KernelInstance {
 public:
  Q4DequantGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_dequant_data(p)) {
    q_ = DeviceBuffer::from(host_.q, "Q4_0 matrix");
    out_ = DeviceBuffer::from(host_.out, "dequantized matrix");
    blocks_ = host_.q.size() / kQ4BlockBytes;
    grid_ = grid_for(blocks_, kDqBlocks, g.sm_count(), 8);
  }
  void launch() override {
    if (p_.dtype == DType::kF32)
      bwprof_q4_0_dequant<float><<<grid_, kDqBlocks, 0, g_.stream()>>>(q_.get<unsigned char>(), out_.get<float>(), blocks_);
    else
      bwprof_q4_0_dequant<__half><<<grid_, kDqBlocks, 0, g_.stream()>>>(q_.get<unsigned char>(), out_.get<__half>(), blocks_);
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_dequant");
  }
  Check check() override {
    g_.synchronize();
    out_.to(host_.out);
    return q4_dequant_check(host_, p_);
  }
  Resources resources() const override {
    return p_.dtype == DType::kF32 ? kernel_resources(bwprof_q4_0_dequant<float>, kDqBlocks)
                                   : kernel_resources(bwprof_q4_0_dequant<__half>, kDqBlocks);
  }

 private:
  GpuBackend& g_;
  Problem p_;
  Q4DequantData host_;
  DeviceBuffer q_, out_;
  std::size_t blocks_ = 0;
  unsigned grid_ = 1;
};

// The tensor-core kernel's shape: warps splitting K per 16-row tile, chunks in flight per warp.
// Fastest of 11 shapes on an H200 for 14336x4096, 4096x14336 (M = 1) and 14336x4096 (M = 8).
constexpr int kMmaWarps = 8;
constexpr int kMmaLoads = 4;
// The software-pipelined kernel (q4_0_mma.hpp): X staged in shared memory for up to kRingMaxXRows
// rows of X taking up to kRingMaxXBytes (4 chunks in flight per warp), else X in the ring (2 chunks).
constexpr int kRingMaxXRows = 2;
constexpr std::size_t kRingMaxXBytes = 48 * 1024;

class Q4MatmulGpu final : public KernelInstance {
 public:
  Q4MatmulGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_matmul_data(p)) {
    for (const char* n : {"M", "N", "K"})
      if (p.i(n) > 2147483647) throw InvalidArgument(std::string(n) + ": at most 2^31-1 on the GPU");
    tiled_ = p.variant == "tiled";
    x_ = DeviceBuffer::from(host_.X, "activations X");
    y_ = DeviceBuffer::from(host_.Y, "output Y");
    mma_ = tiled_ && p.dtype == DType::kF16 && mma_available(g);
    if (mma_) {
      // Re-pack once into the matrix units' fragment order (q4_0_mma.hpp), tiles in parallel.
      const std::int64_t N = p.i("N"), K = p.i("K");
      HostBytes quants(q4_frag_quant_bytes(N, K), "re-packed Q4_0 quants");
      HostBytes scales(q4_frag_scale_bytes(N, K), "re-packed Q4_0 scales");
      parallel_for(q4_frag_tiles(N), 16, [&](std::size_t lo, std::size_t hi) {
        q4_frag_pack(host_.W.data(), N, K, lo, hi, quants.data(), scales.data());
      });
      w_ = DeviceBuffer::from(quants, "re-packed Q4_0 quants");
      scales_ = DeviceBuffer::from(scales, "re-packed Q4_0 scales");
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
#if defined(BWPROF_CUDA)
    if (mma_) {
      // Which ring kernel: X in shared memory for 1 or 2 rows of X; then 4 warps a tile where every
      // block fits on the GPU at once with at least 16 warps an SM (H100, 14336x4096: 16.6 us against
      // 17.2 at 8 warps, which need 1.7 waves), else 8 warps (4096x14336: 17.4 against 20.9 at 4).
      const int m8 = static_cast<int>(std::min<std::int64_t>(8, p.i("M")));
      const std::size_t x_bytes = q4_x_smem_bytes(m8, p.i("K"));
      path_ = MmaPath::kRingX;
      if (m8 <= kRingMaxXRows && x_bytes <= kRingMaxXBytes) {
        ring_smem_ = static_cast<int>(x_bytes);
        const std::int64_t tiles = static_cast<std::int64_t>(q4_frag_tiles(p.i("N"))), sms = g.sm_count();
        path_ = MmaPath::kRingS4;
        const std::int64_t resident = std::int64_t{mma_dispatch(nullptr, 0, 0).runtime_blocks_per_sm} * sms;
        path_ = tiles <= resident && 4 * tiles >= 16 * sms ? MmaPath::kRingS4 : MmaPath::kRingS8;
      }
      // A tuning knob for benchmarks: BWPROF_Q4_KERNEL=tile selects the round-based kernel above.
      if (const char* e = std::getenv("BWPROF_Q4_KERNEL"))
        if (!std::strcmp(e, "tile")) path_ = MmaPath::kTile;
      res_ = mma_dispatch(nullptr, 0, 0);
    }
#endif
  }
  void launch() override {
    if (p_.dtype == DType::kF32) run<float>(); else run<__half>();
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.Y);
    return q4_matmul_check(host_, p_);
  }
  Resources resources() const override {
#if defined(BWPROF_CUDA)
    if (mma_) return res_;
#endif
    if (p_.dtype == DType::kF32)
      return tiled_ ? kernel_resources(bwprof_q4_0_matmul<float, 1, true>, kMatBlock)
                    : kernel_resources(bwprof_q4_0_matmul<float, 1, false>, kMatBlock);
    return tiled_ ? kernel_resources(bwprof_q4_0_matmul<__half, 1, true>, kMatBlock)
                  : kernel_resources(bwprof_q4_0_matmul<__half, 1, false>, kMatBlock);
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
#if defined(BWPROF_CUDA)
  // kRingS4 / kRingS8: X in shared memory, 4 or 8 warps a tile; kRingX: X in registers.
  enum class MmaPath { kTile, kRingS4, kRingS8, kRingX };
  // Launches the chosen tensor-core kernel for m rows of X, or (x null) returns its resources.
  Resources mma_dispatch(const __half* x, __half* y, int m) {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const unsigned tiles = static_cast<unsigned>(q4_frag_tiles(N));
    auto go = [&](auto* fn, int threads, int smem) {
      if (!x) {
        if (smem > 48 * 1024)
          BWPROF_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(fn), hipFuncAttributeMaxDynamicSharedMemorySize, smem));
        return kernel_resources(fn, threads, smem);
      }
      fn<<<tiles, threads, smem, g_.stream()>>>(w_.get<uint4>(), scales_.get<uint2>(), x, y, m, N, K);
      return Resources{};
    };
    switch (path_) {
      case MmaPath::kRingS4: return go(&bwprof_q4_0_matmul_ring<4, 4, true>, 4 * 32, ring_smem_);
      case MmaPath::kRingS8: return go(&bwprof_q4_0_matmul_ring<8, 4, true>, 8 * 32, ring_smem_);
      case MmaPath::kRingX: return go(&bwprof_q4_0_matmul_ring<8, 2, false>, 8 * 32, 0);
      default: return go(&bwprof_q4_0_matmul_mma<kMmaWarps, kMmaLoads, false>, kMmaWarps * 32, 0);
    }
  }
#endif
  static bool mma_available(GpuBackend& g) {
#if defined(BWPROF_CUDA)
    return std::atoi(g.info().arch.c_str() + 3) >= 80;  // "sm_90"
#else
    (void)g;
    return false;
#endif
  }
  template <class T>
  void run() {
    const int M = static_cast<int>(p_.i("M")), N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
#if defined(BWPROF_CUDA)
    if (mma_) {  // FP16: up to 8 rows of X per pass are the mma's 8 columns
      for (int m0 = 0; m0 < M; m0 += 8) mma_dispatch(x_.get<__half>() + static_cast<std::size_t>(m0) * K,
                                                     y_.get<__half>() + static_cast<std::size_t>(m0) * N, std::min(8, M - m0));
      BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul_mma");
      return;
    }
#endif
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
  bool tiled_ = false, mma_ = false;
  int warp_ = 32;
#if defined(BWPROF_CUDA)
  MmaPath path_ = MmaPath::kTile;
  int ring_smem_ = 0;
  Resources res_;
#endif
};

}  // namespace

std::unique_ptr<KernelInstance> make_q4_0_dequant_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4DequantGpu>(as_gpu(b), p);
}

std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4MatmulGpu>(as_gpu(b), p);
}

}  // namespace bwprof
