// GEMV y = W.x: host operands, the CPU kernel and the float64 gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// y[N] = W[N,K] . x[K] (W row-major, as a linear layer's weight), FP32 accumulation.
struct GemvData {
  HostTensor W, x, y;
};
GemvData make_gemv_data(const Problem& p);
void gemv_cpu(GemvData& d, const Problem& p);
Check gemv_check(const GemvData& d, const Problem& p);

// The GPU kernel's shape (gpu.hip): `tpr` threads a row (a power of two from the warp to 256), `loads`
// 16-byte loads of W a thread a round (2, 4 or 8: its template argument) and `block` threads a block
// (128 or 256, at least tpr: block / tpr rows a block); each row on the fewest threads whose loads
// cover it in one round. Rows of 16-bit elements read in vectors: 4 loads a thread while a row fits
// in 128 threads' loads (512 vectors), 8 beyond, in blocks of 128 threads (or of the row's 256).
// FP32 rows and rows whose length is no multiple of a vector (read element by element) keep 2 loads
// in blocks of 256, the shape of before: measured on an H200, the 16-bit shapes gained 5-12 % on
// large FP16 and BF16 GEMVs, while on FP32 they ranged from 10 % faster to 9 % slower (gpu.hip).
// A row of 256 threads takes a block of its own (a row never spans blocks).
struct GemvGpuShape {
  int tpr, loads, block;
};
inline GemvGpuShape gemv_gpu_shape(std::int64_t K, int elem_bytes, int warp) {
  const std::int64_t V = 16 / elem_bytes;
  const bool vec = K % V == 0, wide = vec && elem_bytes == 2;
  const int loads = !wide ? 2 : K / V <= 128 * 4 ? 4 : 8;
  const std::int64_t units = vec ? (K / V + loads - 1) / loads : K;  // what one round of a row's threads covers
  int tpr = warp;
  while (tpr < 256 && tpr < units) tpr *= 2;
  const int block = wide ? 128 : 256;
  return GemvGpuShape{tpr, loads, block < tpr ? tpr : block};
}

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_gemv_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_gemv_gpu(Backend&, const Problem&);

}  // namespace bwprof
