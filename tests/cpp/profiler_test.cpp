// bwprof::Profiler on the CPU: the user's code gets bwprof's row, derived the same way.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/profiler.hpp"

namespace {

void add(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c) {
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
}

double gbs(const bwprof::Measurement& m) { return (m.bytes_read + m.bytes_written) / (m.time_us.median * 1e-6) / 1e9; }

}  // namespace

TEST(Profiler, CpuRowIsBytesOverMedianTime) {
  const std::size_t n = 1 << 16;
  std::vector<float> a(n, 1.5f), b(n, 2.0f), c(n, 0.0f);
  bwprof::Profiler prof("vector_add", "cpu");
  prof.set_bytes(2.0 * n * 4, 1.0 * n * 4).set_flops(1.0 * n).set_repeats(5, 0.0);
  prof.set_host_buffers({{a.data(), n * 4}, {b.data(), n * 4}, {c.data(), n * 4}});
  int calls = 0;
  const bwprof::Measurement m = prof.measure([&] { add(a, b, c), ++calls; });
  EXPECT_EQ(c[n - 1], 3.5f);
  EXPECT_EQ(m.kernel, "vector_add");
  EXPECT_EQ(m.variant, "user");
  EXPECT_EQ(m.family, "user");
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.cache, "cold");
  EXPECT_EQ(m.bytes_source, "declared");
  EXPECT_EQ(m.time_us.count, 5);
  EXPECT_EQ(calls, 5 + m.warmup);
  EXPECT_GT(m.bandwidth_gbs, 0);
  EXPECT_NEAR(m.bandwidth_gbs, gbs(m), 1e-9 * gbs(m));
  EXPECT_NEAR(m.gflops, m.flops / (m.time_us.median * 1e-6) / 1e9, 1e-9 * m.gflops);
  EXPECT_FALSE(m.bound.empty());
  EXPECT_FALSE(m.bottleneck.empty());
  // The same record (columns, order) as bwprof's kernels.
  std::vector<std::string> cols;
  for (auto& kv : m.record()) cols.push_back(kv.first);
  EXPECT_EQ(cols, bwprof::Measurement::columns());
}

TEST(Profiler, StreamFormOnTheCpuAndHotCache) {
  std::vector<double> v(4096, 1.0);
  double sum = 0;
  bwprof::Profiler prof("sum", "cpu");
  prof.set_bytes(v.size() * 8.0, 0, "inferred").set_cache("hot").set_warmup(0).set_repeats(3, 0.0);
  const bwprof::Measurement m = prof.measure([&](bwprof::Stream s) {
    EXPECT_EQ(s.handle, nullptr);
    for (double x : v) sum += x;
  });
  EXPECT_EQ(m.cache, "hot");
  EXPECT_EQ(m.warmup, 0);
  EXPECT_EQ(m.bytes_source, "inferred");
  EXPECT_NEAR(m.bandwidth_gbs, gbs(m), 1e-9 * gbs(m));
}

TEST(Profiler, SingleShotAccumulatesRegions) {
  std::vector<float> a(1 << 14, 1.0f), b(1 << 14, 2.0f), c(1 << 14);
  bwprof::Profiler prof("shot", "cpu");
  prof.set_bytes(a.size() * 8.0, a.size() * 4.0);  // no buffers: a cold region streams the caches out
  for (int i = 1; i <= 3; ++i) {
    prof.start();
    add(a, b, c);
    const bwprof::Measurement m = prof.stop();
    EXPECT_EQ(m.time_us.count, i);
    EXPECT_NEAR(m.bandwidth_gbs, gbs(m), 1e-9 * gbs(m));
  }
  prof.reset();
  prof.start();
  EXPECT_EQ(prof.stop().time_us.count, 1);
  EXPECT_THROW(prof.stop(), bwprof::InvalidArgument);
  prof.start();
  EXPECT_THROW(prof.start(), bwprof::InvalidArgument);
  prof.stop();
}

TEST(Profiler, BadInputIsAnError) {
  EXPECT_THROW(bwprof::Profiler("", "cpu"), bwprof::InvalidArgument);
  EXPECT_THROW(bwprof::Profiler("x", "no-such-device"), bwprof::InvalidArgument);
  bwprof::Profiler prof("x", "cpu");
  EXPECT_THROW(prof.set_bytes(-1, 0), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_bytes(0, std::nan("")), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_bytes(0, INFINITY), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_bytes(1, 1, "guessed"), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_flops(-2), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_dtype("int3"), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_cache("warm"), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_warmup(-1), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_repeats(0), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_repeats(5, 0.0, 4), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_stream_hold("sleep"), bwprof::InvalidArgument);
  EXPECT_THROW(prof.measure(std::function<void()>{}), bwprof::InvalidArgument);
}

TEST(Profiler, ExceptionsFromTheCodePropagateAndTheProfilerStaysUsable) {
  bwprof::Profiler prof("thrower", "cpu");
  prof.set_bytes(8, 8).set_repeats(2, 0.0);
  int calls = 0;
  EXPECT_THROW(prof.measure([&] {
    if (++calls == 3) throw std::runtime_error("boom");
  }),
               std::runtime_error);
  EXPECT_EQ(calls, 3);
  const bwprof::Measurement m = prof.measure([] {});
  EXPECT_EQ(m.time_us.count, 2);
}

TEST(Profiler, UnsetBytesAndFlopsAreUnknownNotZero) {
  std::vector<float> a(1 << 16, 1.0f);
  bwprof::Profiler prof("touch", "cpu");
  prof.set_repeats(3, 0.0);
  bwprof::Measurement m = prof.measure([&] {
    for (auto& x : a) x += 1.0f;
  });
  EXPECT_EQ(m.bytes_source, "unknown");
  EXPECT_EQ(m.flops_source, "unknown");
  EXPECT_TRUE(std::isnan(m.bytes_read) && std::isnan(m.bytes_written) && std::isnan(m.flops));
  EXPECT_GT(m.time_us.median, 0);
  EXPECT_EQ(m.bound, "unknown");
  EXPECT_EQ(m.bottleneck.rfind("bytes and FLOPs unknown", 0), 0u) << m.bottleneck;
  // One side unknown only with an unknown source; a NaN otherwise is bad input.
  prof.set_bytes(std::nan(""), 4.0 * a.size(), "unknown");
  EXPECT_THROW(prof.set_bytes(std::nan(""), 4.0 * a.size(), "declared"), bwprof::InvalidArgument);
  EXPECT_THROW(prof.set_flops(1e6, "guessed"), bwprof::InvalidArgument);
  prof.set_bytes(4.0 * a.size(), 4.0 * a.size()).set_flops(1.0 * a.size(), "inferred");
  m = prof.measure([&] {
    for (auto& x : a) x += 1.0f;
  });
  EXPECT_EQ(m.bytes_source, "declared");
  EXPECT_EQ(m.flops_source, "inferred");
  EXPECT_DOUBLE_EQ(m.intensity_flop_per_byte, 1.0 / 8.0);
}
