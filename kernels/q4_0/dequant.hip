// Q4_0 dequantization on the GPU: llama.cpp's 18-byte blocks expanded to FP32 or FP16.
#include "bwprof/error.hpp"
#include "common/gpu_common.hpp"
#include "gpu/gpu_backend.hpp"
#include "q4_0/gpu.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

using namespace gpu;

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

class Q4DequantGpu final : public KernelInstance {
 public:
  Q4DequantGpu(GpuBackend& g, const Problem& p) : g_(g), p_(p), host_(make_q4_dequant_data(p)) {
    q_ = DeviceBuffer::from(host_.q, "Q4_0 matrix");
    out_ = DeviceBuffer::from(host_.out, "dequantized matrix");
    blocks_ = host_.q.size() / kQ4BlockBytes;
    grid_ = grid_for(blocks_, kDqBlocks, g.sm_count(), 8);
  }
  void launch() override {
    by_dtype(p_.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      bwprof_q4_0_dequant<T><<<grid_, kDqBlocks, 0, g_.stream()>>>(q_.get<unsigned char>(), out_.get<T>(), blocks_);
    });
    BWPROF_CHECK_LAUNCH("bwprof_q4_0_dequant");
  }
  Check check() override {
    g_.synchronize();
    out_.to(host_.out);
    return q4_dequant_check(host_, p_);
  }
  Resources resources() const override {
    return by_dtype(p_.dtype, [&](auto t) {
      return kernel_resources(bwprof_q4_0_dequant<typename decltype(t)::type>, kDqBlocks);
    });
  }

 private:
  GpuBackend& g_;
  Problem p_;
  Q4DequantData host_;
  DeviceBuffer q_, out_;
  std::size_t blocks_ = 0;
  unsigned grid_ = 1;
};

}  // namespace

std::unique_ptr<KernelInstance> make_q4_0_dequant_gpu(Backend& b, const Problem& p) {
  return std::make_unique<Q4DequantGpu>(as_gpu(b), p);
}

}  // namespace bwprof
