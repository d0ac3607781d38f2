// GEMM C = act(A.B + bias) on the CPU: register/L2-blocked, FP32 accumulation.
#include <algorithm>

#include "bwprof/parallel.hpp"
#include "cpu_instance.hpp"
#include "cpu_kernels.hpp"

namespace bwprof {

namespace {

constexpr std::int64_t kRowsPerTile = 8;
constexpr std::int64_t kColsPerTile = 256;  // K x 256 FP32 of B stays in a 1 MB L2 for K <= 1024

template <class T> inline float ld(const T* p, std::int64_t i);
template <> inline float ld<float>(const float* p, std::int64_t i) { return p[i]; }
template <> inline float ld<half_bits>(const half_bits* p, std::int64_t i) { return half_to_float(p[i]); }
inline void st(float* p, std::int64_t i, float v) { p[i] = v; }
inline void st(half_bits* p, std::int64_t i, float v) { p[i] = float_to_half(v); }

template <class T>
void gemm_typed(GemmData& d, std::int64_t M, std::int64_t N, std::int64_t K, bool has_bias, Act act) {
  const T* A = d.A.as<T>();
  const T* B = d.B.as<T>();
  const T* bias = has_bias ? d.bias.as<T>() : nullptr;
  T* C = d.C.as<T>();
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
        for (std::int64_t j = 0; j < cols; ++j) brow[j] = ld(b, j);
        for (std::int64_t r = 0; r < rows; ++r) {
          const float a = ld(A, (i0 + r) * K + k);
          float* out = acc[r];
          for (std::int64_t j = 0; j < kColsPerTile; ++j) out[j] += a * brow[j];
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        T* c = C + (i0 + r) * N + j0;
        for (std::int64_t j = 0; j < cols; ++j) {
          float v = acc[r][j] + (bias ? ld(bias, j0 + j) : 0.0f);
          st(c, j, act_f(act, v));
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

}  // namespace

GemmData make_gemm_data(const Problem& p) {
  const std::size_t M = p.i("M"), N = p.i("N"), K = p.i("K");
  ensure_host_memory(double(M * K + K * N + M * N + N) * dtype_size(p.dtype), "GEMM operands");
  GemmData d;
  d.A = HostTensor(p.dtype, M * K, "GEMM A");
  d.B = HostTensor(p.dtype, K * N, "GEMM B");
  d.C = HostTensor(p.dtype, M * N, "GEMM C");
  d.A.fill_random(21);
  d.B.fill_random(22);
  d.C.fill(0.0f);
  if (p.b("bias")) {
    d.bias = HostTensor(p.dtype, N, "GEMM bias");
    d.bias.fill_random(23);
  }
  return d;
}

void gemm_cpu(GemmData& d, const Problem& p) {
  const Act act = parse_act(p.s("act"));
  if (p.dtype == DType::kF32)
    gemm_typed<float>(d, p.i("M"), p.i("N"), p.i("K"), p.b("bias"), act);
  else
    gemm_typed<half_bits>(d, p.i("M"), p.i("N"), p.i("K"), p.b("bias"), act);
}

Check gemm_check(const GemmData& d, const Problem& p) {
  const std::int64_t N = p.i("N"), K = p.i("K");
  const Act act = parse_act(p.s("act"));
  ErrorMeter m;
  std::vector<double> row(N);
  for (std::int64_t i : sample_indices(p.i("M"), 16)) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = d.A.get(i * K + k);
      for (std::int64_t j = 0; j < N; ++j) row[j] += a * d.B.get(k * N + j);
    }
    for (std::int64_t j = 0; j < N; ++j) {
      double v = row[j] + (p.b("bias") ? double(d.bias.get(j)) : 0.0);
      m.add(d.C.get(i * N + j), act_gold(act, v));
    }
  }
  return m.finish(tolerance_for(p.dtype, 1e-4));
}

std::unique_ptr<KernelInstance> make_gemm_cpu(Backend&, const Problem& p) {
  return make_cpu_kernel(p, make_gemm_data(p), gemm_cpu, gemm_check, buffers);
}

}  // namespace bwprof
