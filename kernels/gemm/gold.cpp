// GEMM and QKV projection operands, and the float64 gold: sampled rows recomputed in double.
#include <algorithm>
#include <vector>

#include "gemm/gemm.hpp"

namespace bwprof {

GemmData make_gemm_data(const Problem& p) {
  const std::size_t M = p.i("M"), N = p.i("N"), K = p.i("K");
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

namespace {

// Sampled rows of C = act(A.B + bias) recomputed in float64.
Check check_matmul(const HostTensor& A, const HostTensor& B, const HostTensor* bias, const HostTensor& C,
                   std::int64_t M, std::int64_t N, std::int64_t K, Act act, double tol) {
  ErrorMeter m;
  std::vector<double> row(N);
  for (std::int64_t i : sample_indices(M, 16)) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = A.get(i * K + k);
      for (std::int64_t j = 0; j < N; ++j) row[j] += a * B.get(k * N + j);
    }
    for (std::int64_t j = 0; j < N; ++j) {
      double v = row[j] + (bias ? double(bias->get(j)) : 0.0);
      m.add(C.get(i * N + j), act_gold(act, v));
    }
  }
  return m.finish(tol);
}

}  // namespace

Check gemm_check(const GemmData& d, const Problem& p, double fp32_tol) {
  return check_matmul(d.A, d.B, p.b("bias") ? &d.bias : nullptr, d.C, p.i("M"), p.i("N"), p.i("K"),
                      parse_act(p.s("act")), tolerance_for(p.dtype, fp32_tol, p.i("K")));
}

QkvData make_qkv_data(const Problem& p) {
  const std::size_t T = p.i("tokens"), H = p.i("hidden");
  QkvData d;
  d.X = HostTensor(p.dtype, T * H, "QKV X");
  d.W = HostTensor(p.dtype, 3 * H * H, "QKV W");
  d.Y = HostTensor(p.dtype, 3 * T * H, "QKV Y");
  d.X.fill_random(24);
  d.W.fill_random(25);
  d.Y.fill(0.0f);
  return d;
}

Check qkv_check(const QkvData& d, const Problem& p) {
  const std::int64_t T = p.i("tokens"), H = p.i("hidden");
  return check_matmul(d.X, d.W, nullptr, d.Y, T, 3 * H, H, Act::kNone, tolerance_for(p.dtype, 1e-4, H));
}

}  // namespace bwprof
