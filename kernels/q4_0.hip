// Q4_0 on the GPU: dequantization to FP16/FP32, and the fused matrix-vector / small-batch product
// in llama.cpp's row layout (18-byte blocks, 2-byte aligned) and in a layout re-packed once at
// load time (each row's 16-byte quant groups aligned for 16-byte loads, its scales apart).
#include <cstring>

#include "bwprof/error.hpp"
#include "cpu/reference.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu_common.hpp"
#include "gpu_kernels.hpp"

namespace bwprof {

namespace {

using namespace gpu;
constexpr int kBlock = 256;

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

template <class T>
__global__ void __launch_bounds__(kBlock) bwprof_q4_0_dequant(const unsigned char* __restrict__ q,
                                                              T* __restrict__ out, std::size_t blocks) {
  constexpr int V = Elems<T>::kVec;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; b < blocks; b += stride) {
    unsigned qw[4];
    const float d = load_llama_block(q + b * kQ4BlockBytes, qw);
    float v[32];
    decode_q4(qw, d, v);
    uint4* o = reinterpret_cast<uint4*>(out + b * 32);
#pragma unroll
    for (int i = 0; i < 32 / V; ++i) o[i] = pack<T>(v + i * V);
  }
}

// Y[m, n] = sum_k X[m, k] W[n, k] for MB rows of X at once; one warp per row n of W.
template <class T, int MB, bool TILED>
__global__ void __launch_bounds__(kBlock) bwprof_q4_0_matmul(const unsigned char* __restrict__ w,
                                                             const __half* __restrict__ scales,
                                                             const T* __restrict__ x, T* __restrict__ y,
                                                             int M, int N, int K) {
  constexpr int V = Elems<T>::kVec;
  const int warps = blockDim.x / warpSize;
  const int n = blockIdx.x * warps + threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  if (n >= N) return;
  const int nb = K / 32;
  float acc[MB];
#pragma unroll
  for (int m = 0; m < MB; ++m) acc[m] = 0.f;
  for (int blk = lane; blk < nb; blk += warpSize) {
    unsigned qw[4];
    float d;
    if (TILED) {
      const uint4 q = reinterpret_cast<const uint4*>(w)[static_cast<std::size_t>(n) * nb + blk];
      qw[0] = q.x, qw[1] = q.y, qw[2] = q.z, qw[3] = q.w;
      d = __half2float(scales[static_cast<std::size_t>(n) * nb + blk]);
    } else {
      d = load_llama_block(w + (static_cast<std::size_t>(n) * nb + blk) * kQ4BlockBytes, qw);
    }
    float wv[32];
    decode_q4(qw, d, wv);
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      if (m >= M) break;
      const uint4* xv = reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(m) * K + blk * 32);
#pragma unroll
      for (int i = 0; i < 32 / V; ++i) {
        float fx[V];
        unpack<T>(xv[i], fx);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[m] += fx[e] * wv[i * V + e];
      }
    }
  }
#pragma unroll
  for (int m = 0; m < MB; ++m) {
    if (m >= M) break;
    const float s = warp_sum(acc[m]);
    if (lane == 0) y[static_cast<std::size_t>(m) * N + n] = from_f<T>(s);
  }
}

class Q4DequantGpu final : public KernelInstance {
 public:
  Q4DequantGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_dequant_data(p)) {
    q_ = DeviceBuffer::from(host_.q, "Q4_0 matrix");
    out_ = DeviceBuffer::from(host_.out, "dequantized matrix");
    blocks_ = host_.q.size() / kQ4BlockBytes;
    grid_ = grid_for(blocks_, kBlock, g.sm_count(), 16);
  }
  void launch() override {
    if (p_.dtype == DType::kF32)
      bwprof_q4_0_dequant<float><<<grid_, kBlock, 0, g_.stream()>>>(q_.get<unsigned char>(), out_.get<float>(), blocks_);
    else
      bwprof_q4_0_dequant<__half><<<grid_, kBlock, 0, g_.stream()>>>(q_.get<unsigned char>(), out_.get<__half>(), blocks_);
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_dequant");
  }
  Check check() override {
    g_.synchronize();
    out_.to(host_.out);
    return q4_dequant_check(host_, p_);
  }
  Resources resources() const override {
    return p_.dtype == DType::kF32 ? kernel_resources(bwprof_q4_0_dequant<float>, kBlock)
                                   : kernel_resources(bwprof_q4_0_dequant<__half>, kBlock);
  }

 private:
  GpuBackend& g_;
  Problem p_;
  Q4DequantData host_;
  DeviceBuffer q_, out_;
  std::size_t blocks_ = 0;
  unsigned grid_ = 1;
};

class Q4MatmulGpu final : public KernelInstance {
 public:
  Q4MatmulGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_matmul_data(p)) {
    for (const char* n : {"M", "N", "K"})
      if (p.i(n) > 2147483647) throw InvalidArgument(std::string(n) + ": at most 2^31-1 on the GPU");
    tiled_ = p.variant == "tiled";
    x_ = DeviceBuffer::from(host_.X, "activations X");
    y_ = DeviceBuffer::from(host_.Y, "output Y");
    if (tiled_) {
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
    if (p_.dtype == DType::kF32) run<float>(); else run<__half>();
  }
  Check check() override {
    g_.synchronize();
    y_.to(host_.Y);
    return q4_matmul_check(host_, p_);
  }
  Resources resources() const override {
    if (p_.dtype == DType::kF32)
      return tiled_ ? kernel_resources(bwprof_q4_0_matmul<float, 1, true>, kBlock)
                    : kernel_resources(bwprof_q4_0_matmul<float, 1, false>, kBlock);
    return tiled_ ? kernel_resources(bwprof_q4_0_matmul<__half, 1, true>, kBlock)
                  : kernel_resources(bwprof_q4_0_matmul<__half, 1, false>, kBlock);
  }

 private:
  template <class T, int MB>
  void launch_mb(const T* x, T* y, int m) {
    const int N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    const int rows = kBlock / warp_;
    const unsigned grid = (N + rows - 1) / rows;
    if (tiled_)
      bwprof_q4_0_matmul<T, MB, true><<<grid, kBlock, 0, g_.stream()>>>(w_.get<unsigned char>(), scales_.get<__half>(), x, y, m, N, K);
    else
      bwprof_q4_0_matmul<T, MB, false><<<grid, kBlock, 0, g_.stream()>>>(w_.get<unsigned char>(), nullptr, x, y, m, N, K);
  }
  template <class T>
  void run() {
    const int M = static_cast<int>(p_.i("M")), N = static_cast<int>(p_.i("N")), K = static_cast<int>(p_.i("K"));
    for (int m0 = 0; m0 < M; m0 += 8) {  // rows of X in groups of up to 8, each group one pass over W
      const int m = std::min(8, M - m0);
      const T* x = x_.get<T>() + static_cast<std::size_t>(m0) * K;
      T* y = y_.get<T>() + static_cast<std::size_t>(m0) * N;
      if (m == 1) launch_mb<T, 1>(x, y, m);
      else if (m == 2) launch_mb<T, 2>(x, y, m);
      else if (m <= 4) launch_mb<T, 4>(x, y, m);
      else launch_mb<T, 8>(x, y, m);
    }
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_matmul");
  }

  GpuBackend& g_;
  Problem p_;
  Q4MatmulData host_;
  DeviceBuffer x_, y_, w_, scales_;
  bool tiled_ = false;
  int warp_ = 32;
};

}  // namespace

std::unique_ptr<KernelInstance> make_q4_0_dequant_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4DequantGpu>(as_gpu(b), p);
}

std::unique_ptr<KernelInstance> make_q4_0_matmul_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4MatmulGpu>(as_gpu(b), p);
}

}  // namespace bwprof
