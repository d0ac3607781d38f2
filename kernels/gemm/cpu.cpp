// GEMM C = act(A.B + bias) and the QKV projection on the CPU: register/L2-blocked, FP32 accumulation.
#include <algorithm>

#include "bwprof/parallel.hpp"
#include "common/cpu_kernel.hpp"
#include "gemm/gemm.hpp"

namespace bwprof {

namespace {

constexpr std::int64_t kRowsPerTile = 8;
constexpr std::int64_t kColsPerTile = 256;  // K x 256 FP32 of B stays in a 1 MB L2 for K <= 1024

template <class T>
void gemm_typed(const T* A, const T* B, const T* bias, T* C, std::int64_t M, std::int64_t N, std::int64_t K,
                Act act) {
  const std::int64_t row_tiles = (M + kRowsPerTile - 1) / kRowsPerTile;
  const std::int64_t col_tiles = (N + kColsPerTile - 1) / kColsPerTile;
  parallel_for(static_cast<std::size_t>(row_tiles * col_tiles), 1, [&](std::size_t lo, std::size_t hi) {
    alignas(64) float acc[kRowsPerTile][kColsPerTile];
    alignas(64) float brow[kColsPerTile];
    for (std::size_t t = lo; t < hi; ++t) {
      const std::int64_t i0 = (t / col_tiles) * kRowsPerTile, j0 = (t % col_tiles) * kColsPerTile;
      const std::int64_t rows = std::min(kRowsPerTile, M - i0), cols = std::min(kColsPerTile, N - j0);
      for (auto& r : acc) std::fill(r, r + kColsPerTile, 0.0f);
      std::fill(brow, brow + kColsPerTile, 0.0f);  // columns past N stay zero
      for (std::int64_t k = 0; k < K; ++k) {
        const T* b = B + k * N + j0;
        for (std::int64_t j = 0; j < cols; ++j) brow[j] = load_f(b, j);
        for (std::int64_t r = 0; r < rows; ++r) {
          const float a = load_f(A, (i0 + r) * K + k);
          float* out = acc[r];
          for (std::int64_t j = 0; j < kColsPerTile; ++j) out[j] += a * brow[j];
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        T* c = C + (i0 + r) * N + j0;
        for (std::int64_t j = 0; j < cols; ++j) {
          float v = acc[r][j] + (bias ? load_f(bias, j0 + j) : 0.0f);
          store_f(c, j, act_f(act, v));
        }
      }
    }
  });
}

BufferList buffers(const GemmData& d) {
  BufferList l;
  add_buffer(l, d.A);
  add_buffer(l, d.B);
  add_buffer(l, d.bias);
  add_buffer(l, d.C);
  return l;
}

BufferList qkv_buffers(const QkvData& d) {
  BufferList l;
  add_buffer(l, d.X);
  add_buffer(l, d.W);
  add_buffer(l, d.Y);
  return l;
}

Check gemm_check_default(const GemmData& d, const Problem& p) { return gemm_check(d, p); }

}  // namespace

void gemm_cpu(GemmData& d, const Problem& p) {
  const Act act = parse_act(p.s("act"));
  const bool b = p.b("bias");
  by_storage(p.dtype, [&](auto t) {
    using T = decltype(t);
    gemm_typed<T>(d.A.as<T>(), d.B.as<T>(), b ? d.bias.as<T>() : nullptr, d.C.as<T>(), p.i("M"), p.i("N"), p.i("K"),
                  act);
  });
}

std::unique_ptr<KernelInstance> make_gemm_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_gemm_data(p), gemm_cpu, gemm_check_default, buffers);
}

void qkv_cpu(QkvData& d, const Problem& p) {
  const std::int64_t T = p.i("tokens"), H = p.i("hidden");
  by_storage(p.dtype, [&](auto t) {
    using E = decltype(t);
    gemm_typed<E>(d.X.as<E>(), d.W.as<E>(), nullptr, d.Y.as<E>(), T, 3 * H, H, Act::kNone);
  });
}

std::unique_ptr<KernelInstance> make_qkv_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_qkv_data(p), qkv_cpu, qkv_check, qkv_buffers);
}

}  // namespace bwprof
