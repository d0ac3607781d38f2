// GEMM and QKV projection operands, and the float64 gold: sampled rows recomputed in double.
#include <algorithm>
#include <cmath>
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

// Half the spacing of `t`'s subnormals: the absolute part of rounding an output to `t`
// (fl(y) = y (1 + d) + e, |e| <= this); an FP16 GELU tail of 1e-6 is stored to about 3e-8.
double underflow_floor(DType t) {
  switch (t) {
    case DType::kF16: return std::ldexp(1.0, -25);
    case DType::kBF16: return std::ldexp(1.0, -134);
    default: return std::ldexp(1.0, -150);
  }
}

// Where act's slope changes sign (its minimum), or NaN: the largest |act(w) - act(z)| over an
// interval is at its ends or there.
double act_turning_point(Act a) {
  switch (a) {
    case Act::kGelu: return -0.75179639622;  // Phi(x) + x phi(x) = 0
    case Act::kSilu: return -1.27846454276;  // 1 + x (1 - sigma(x)) = 0
    default: return NAN;
  }
}

}  // namespace

double act_error_bound(Act act, double z, double dz) {
  const double y = act_gold(act, z);
  double d = std::max(std::fabs(act_gold(act, z - dz) - y), std::fabs(act_gold(act, z + dz) - y));
  const double c = act_turning_point(act);
  if (std::fabs(c - z) <= dz) d = std::max(d, std::fabs(act_gold(act, c) - y));
  return d;
}

// Sampled rows of C = act(z), z = A.B + bias, recomputed in float64 and judged by what a kernel's
// error in z can do to y. Z and Y are the largest |z| and |y| sampled; a kernel may carry an error
// of tol Z in z (the normwise rule a linear output is held to: y = z, Y = Z), so an output may be
// off by D = max |act(w) - act(z)| over |w - z| <= tol Z; it passes when
//   |y_out - act(z)| <= max(tol Y, D) + e + approx,
// e the output dtype's underflow floor and approx a documented bound of an approximate activation
// (the vendor's tanh-form GELU). Without an activation this is today's normwise check; with one,
// an output in the tail (GELU of z = -5 is 1e-6, one output alone at M = N = 1) is no longer judged
// relative to itself, which no kernel that rounds z can meet. The reported error is in units of the
// normwise rule: max over outputs of (|dy| - e - approx) tol / max(tol Y, D).
Check check_matmul(const HostTensor& A, const HostTensor& B, const HostTensor* bias, const HostTensor& C,
                   std::int64_t M, std::int64_t N, std::int64_t K, Act act, double tol, double approx) {
  std::vector<double> row(N), zs, outs;
  double Z = 0, Y = 0;
  for (std::int64_t i : sample_indices(M, 16)) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = A.get(i * K + k);
      for (std::int64_t j = 0; j < N; ++j) row[j] += a * B.get(k * N + j);
    }
    for (std::int64_t j = 0; j < N; ++j) {
      const double z = row[j] + (bias ? double(bias->get(j)) : 0.0);
      zs.push_back(z);
      outs.push_back(C.get(i * N + j));
      Z = std::max(Z, std::fabs(z));
      Y = std::max(Y, std::fabs(act_gold(act, z)));
    }
  }
  const double floor = underflow_floor(C.dtype()) + approx;
  double err = 0;
  for (std::size_t n = 0; n < zs.size(); ++n) {
    const double d = std::fabs(outs[n] - act_gold(act, zs[n]));
    if (std::isnan(d)) { err = INFINITY; break; }
    const double scale = std::max(tol * Y, act_error_bound(act, zs[n], tol * Z));
    const double over = std::max(0.0, d - floor);
    if (over > 0) err = std::max(err, scale > 0 ? over * tol / scale : INFINITY);
  }
  Check c;
  c.tolerance = tol;
  c.max_rel_error = err;
  c.ok = err <= tol;
  return c;
}

Check gemm_check(const GemmData& d, const Problem& p, double fp32_tol, double act_approx) {
  return check_matmul(d.A, d.B, p.b("bias") ? &d.bias : nullptr, d.C, p.i("M"), p.i("N"), p.i("K"),
                      parse_act(p.s("act")), tolerance_for(p.dtype, fp32_tol, p.i("K")), act_approx);
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
  return check_matmul(d.X, d.W, nullptr, d.Y, T, 3 * H, H, Act::kNone, tolerance_for(p.dtype, 1e-4, H), 0.0);
}

}  // namespace bwprof
