// Q4_0 dequantization and the fused matrix product on the CPU.
#include <algorithm>
#include <vector>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

namespace {

BufferList dequant_buffers(const Q4DequantData& d) {
  BufferList l;
  add_buffer(l, d.q);
  add_buffer(l, d.out);
  return l;
}

BufferList matmul_buffers(const Q4MatmulData& d) {
  BufferList l;
  add_buffer(l, d.X);
  add_buffer(l, d.W);
  add_buffer(l, d.Y);
  return l;
}

}  // namespace

void q4_dequant_cpu(Q4DequantData& d, const Problem& p) {
  const std::int64_t blocks = d.q.size() / kQ4BlockBytes;
  const bool f32 = p.dtype == DType::kF32;
  parallel_for(blocks, 4096, [&](std::size_t lo, std::size_t hi) {
    float tmp[kQ4Block];
    for (std::size_t b = lo; b < hi; ++b) {
      q4_0_dequantize_row(d.q.data() + b * kQ4BlockBytes, kQ4Block, f32 ? d.out.as<float>() + b * kQ4Block : tmp);
      if (!f32) {
        by_storage(p.dtype, [&](auto t) {
          auto* o = d.out.as<decltype(t)>() + b * kQ4Block;
          for (int j = 0; j < kQ4Block; ++j) store_f(o, j, tmp[j]);
        });
      }
    }
  });
}

void q4_matmul_cpu(Q4MatmulData& d, const Problem& p) {
  const std::int64_t M = p.i("M"), N = p.i("N"), K = p.i("K");
  const std::size_t row_bytes = (K / kQ4Block) * kQ4BlockBytes;
  constexpr std::int64_t kMaxM = 8;
  parallel_for(N, 16, [&](std::size_t lo, std::size_t hi) {
    std::vector<float> x(std::min(M, kMaxM) * K);
    for (std::int64_t m0 = 0; m0 < M; m0 += kMaxM) {
      const std::int64_t mb = std::min(kMaxM, M - m0);
      for (std::int64_t i = 0; i < mb * K; ++i) x[i] = d.X.get(m0 * K + i);
      for (std::size_t n = lo; n < hi; ++n) {
        const std::uint8_t* w = d.W.data() + n * row_bytes;
        float acc[kMaxM] = {0};
        float wf[kQ4Block];
        for (std::int64_t k0 = 0; k0 < K; k0 += kQ4Block) {
          q4_0_dequantize_row(w + (k0 / kQ4Block) * kQ4BlockBytes, kQ4Block, wf);
          for (std::int64_t m = 0; m < mb; ++m) {
            const float* xr = x.data() + m * K + k0;
            float s = 0;
            for (int j = 0; j < kQ4Block; ++j) s += xr[j] * wf[j];
            acc[m] += s;
          }
        }
        for (std::int64_t m = 0; m < mb; ++m) d.Y.set((m0 + m) * N + n, acc[m]);
      }
    }
  });
}

std::unique_ptr<KernelInstance> make_q4_0_dequant_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_q4_dequant_data(p), q4_dequant_cpu, q4_dequant_check, dequant_buffers);
}

std::unique_ptr<KernelInstance> make_q4_0_matmul_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_q4_matmul_data(p), q4_matmul_cpu, q4_matmul_check, matmul_buffers);
}

}  // namespace bwprof
