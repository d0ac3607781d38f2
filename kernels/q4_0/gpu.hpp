// The GPU side of the Q4_0 family (GPU compilers only): decoding llama.cpp's blocks, and the
// tensor-core path of the `tiled` matmul (matmul_mma_sm80.hip) as matmul.hip sees it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"

namespace bwprof {

class GpuBackend;

namespace gpu {

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

}  // namespace gpu

// The vector units' matmul (matmul_vec.hpp), one storage type a file: Y for up to 8 rows of X (m)
// in one pass over W, llama.cpp's layout or (tiled) the quants re-packed apart from their scales.
struct Q4VecArgs {
  const unsigned char* w;
  const __half* scales;  // tiled only
  const void* x;
  void* y;
  int m, N, K, warp;
  bool tiled;
  hipStream_t stream;
};
void q4_vec_f32(const Q4VecArgs& a);
void q4_vec_f16(const Q4VecArgs& a);
void q4_vec_bf16(const Q4VecArgs& a);
Resources q4_vec_f32_resources(bool tiled);
Resources q4_vec_f16_resources(bool tiled);
Resources q4_vec_bf16_resources(bool tiled);

// The FP16 `tiled` matmul on NVIDIA matrix units: W re-packed once into their fragment order
// (mma_sm80.hpp) and a software-pipelined kernel chosen for the shape.
class Q4MmaMatmul {
 public:
  virtual ~Q4MmaMatmul() = default;
  // Y[M, N] = X[M, K] . W^T, all M rows of X (up to 8 per pass over W).
  virtual void run(const __half* x, __half* y, int M, hipStream_t stream) = 0;
  virtual Resources resources() const = 0;
  // The kernel chosen, by its name (KernelInstance::explain).
  virtual std::string explain() const = 0;
};

// The path for problem `p` over the llama.cpp-layout weights `w`; nullptr where this build or
// device has none (non-NVIDIA builds, GPUs before sm_80).
std::unique_ptr<Q4MmaMatmul> make_q4_mma_matmul(GpuBackend& g, const Problem& p, const std::uint8_t* w);

}  // namespace bwprof
