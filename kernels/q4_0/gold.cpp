// Q4_0 quantization in llama.cpp's block layout, random quantized matrices and the float64 gold.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bwprof/parallel.hpp"
#include "q4_0/q4_0.hpp"

namespace bwprof {

void q4_0_quantize_row(const float* x, std::int64_t n, std::uint8_t* out) {
  for (std::int64_t blk = 0; blk < n / kQ4Block; ++blk, x += kQ4Block, out += kQ4BlockBytes) {
    // The scale maps the value of largest magnitude, with its sign, to q = 0 (i.e. -8).
    float amax = 0, vmax = 0;
    for (int j = 0; j < kQ4Block; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        vmax = x[j];
      }
    }
    const float d = vmax / -8.0f;
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    const half_bits dh = float_to_half(d);
    std::memcpy(out, &dh, 2);
    for (int j = 0; j < kQ4Block / 2; ++j) {
      int lo = static_cast<int>(x[j] * inv + 8.5f), hi = static_cast<int>(x[j + 16] * inv + 8.5f);
      lo = std::min(15, std::max(0, lo));
      hi = std::min(15, std::max(0, hi));
      out[2 + j] = static_cast<std::uint8_t>(lo | (hi << 4));
    }
  }
}

void q4_0_dequantize_row(const std::uint8_t* q, std::int64_t n, float* out) {
  for (std::int64_t blk = 0; blk < n / kQ4Block; ++blk, q += kQ4BlockBytes, out += kQ4Block) {
    half_bits dh;
    std::memcpy(&dh, q, 2);
    const float d = half_to_float(dh);
    for (int j = 0; j < kQ4Block / 2; ++j) {
      out[j] = static_cast<float>((q[2 + j] & 0x0f) - 8) * d;
      out[j + 16] = static_cast<float>((q[2 + j] >> 4) - 8) * d;
    }
  }
}

namespace {

// Random FP32 weights quantized once (not timed): what a model loader would hand the kernel.
HostBytes random_q4_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, const char* what) {
  HostBytes q(static_cast<std::size_t>(rows * (cols / kQ4Block) * kQ4BlockBytes), what);
  const std::size_t row_bytes = (cols / kQ4Block) * kQ4BlockBytes;
  parallel_for(rows, 64, [&](std::size_t lo, std::size_t hi) {
    HostTensor tmp(DType::kF32, cols, "quantization row");
    for (std::size_t r = lo; r < hi; ++r) {
      std::uint64_t s = seed * 1000003 + r;
      for (std::int64_t c = 0; c < cols; ++c) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        tmp.as<float>()[c] = static_cast<float>((s >> 40) * (2.0 / 16777216.0) - 1.0);
      }
      q4_0_quantize_row(tmp.as<float>(), cols, q.data() + r * row_bytes);
    }
  });
  return q;
}

}  // namespace

Q4DequantData make_q4_dequant_data(const Problem& p) {
  const std::int64_t R = p.i("rows"), C = p.i("cols");
  Q4DequantData d;
  d.q = random_q4_matrix(R, C, 51, "Q4_0 matrix");
  d.out = HostTensor(p.dtype, R * C, "dequantized matrix");
  d.out.fill(0.0f);
  return d;
}

Check q4_dequant_check(const Q4DequantData& d, const Problem& p) {
  const std::int64_t blocks = d.q.size() / kQ4BlockBytes;
  ErrorMeter m;
  for (std::int64_t b : sample_indices(blocks, 1 << 14)) {
    const std::uint8_t* q = d.q.data() + b * kQ4BlockBytes;
    half_bits dh;
    std::memcpy(&dh, q, 2);
    const double scale = half_to_float(dh);
    for (int j = 0; j < 16; ++j) {
      m.add(d.out.get(b * kQ4Block + j), ((q[2 + j] & 0x0f) - 8) * scale);
      m.add(d.out.get(b * kQ4Block + j + 16), ((q[2 + j] >> 4) - 8) * scale);
    }
  }
  return m.finish(tolerance_for(p.dtype, 1e-6));
}

Q4MatmulData make_q4_matmul_data(const Problem& p) {
  const std::int64_t M = p.i("M"), N = p.i("N"), K = p.i("K");
  Q4MatmulData d;
  d.X = HostTensor(p.dtype, M * K, "activations X");
  d.X.fill_random(52);
  d.W = random_q4_matrix(N, K, 53, "Q4_0 weights");
  d.Y = HostTensor(p.dtype, M * N, "output Y");
  d.Y.fill(0.0f);
  return d;
}

Check q4_matmul_check(const Q4MatmulData& d, const Problem& p) {
  const std::int64_t N = p.i("N"), K = p.i("K");
  const std::size_t row_bytes = (K / kQ4Block) * kQ4BlockBytes;
  ErrorMeter m;
  std::vector<float> w(K);
  const auto rows = sample_indices(p.i("M"), 8);
  for (std::int64_t n : sample_indices(N, 256)) {
    q4_0_dequantize_row(d.W.data() + n * row_bytes, K, w.data());
    for (std::int64_t i : rows) {
      double acc = 0;
      for (std::int64_t k = 0; k < K; ++k) acc += double(d.X.get(i * K + k)) * w[k];
      m.add(d.Y.get(i * N + n), acc);
    }
  }
  return m.finish(tolerance_for(p.dtype, 1e-4, p.i("K")));
}

}  // namespace bwprof
