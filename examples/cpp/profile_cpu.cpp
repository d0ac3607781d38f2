// Profiling one's own CPU function with the installed bwprof: y = a * x + y over n floats reads x
// and y once and writes y once (12 bytes and 2 FLOPs per element).
#include <bwprof/profiler.hpp>

#include <cmath>
#include <exception>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

namespace {

void my_axpy(float a, const std::vector<float>& x, std::vector<float>& y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i] + y[i];
}

}  // namespace

namespace {
int run(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 22);
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f + float(i % 7), y[i] = 1.0f - float(i % 5);

  bwprof::Profiler prof("my_axpy", "cpu");
  prof.set_bytes(2.0 * n * sizeof(float), 1.0 * n * sizeof(float)).set_flops(2.0 * n);
  prof.set_host_buffers({{x.data(), n * sizeof(float)}, {y.data(), n * sizeof(float)}});  // what a cold run evicts
  prof.set_repeats(5, 0.02);
  const bwprof::Measurement m = prof.measure([&] { my_axpy(1.0001f, x, y); });
  std::printf("%s on %s: %.1f us median over %d runs, %.2f GB/s (%.0f %% of peak), %s-bound\n  %s\n",
              m.kernel.c_str(), m.device_name.c_str(), m.time_us.median, m.time_us.count, m.bandwidth_gbs,
              m.bandwidth_pct_peak, m.bound.c_str(), m.bottleneck.c_str());

  // The single-shot form, around code that cannot be wrapped in a callable.
  prof.start();
  my_axpy(0.9999f, x, y);
  const bwprof::Measurement once = prof.stop();
  std::printf("single shot: %.1f us, %.2f GB/s\n", once.time_us.median, once.bandwidth_gbs);

  // A step of two parts, each a scoped region with the traffic it declares: each region's time
  // against the step's wall time, judged like any row, and the step's verdict.
  prof.set_repeats(5, 0.0);
  const bwprof::StepReport step = prof.measure_step([&] {
    {
      bwprof::Profiler::Region r(prof, "axpy", 2.0 * n * sizeof(float), 1.0 * n * sizeof(float), 2.0 * n);
      my_axpy(1.0001f, x, y);
    }
    {
      bwprof::Profiler::Region r(prof, "scale", 1.0 * n * sizeof(float), 1.0 * n * sizeof(float), 1.0 * n);
      for (float& v : y) v *= 0.9999f;
    }
  });
  std::printf("step: %s\n", step.verdict_text.c_str());
  for (const bwprof::StepRegion& r : step.regions)
    std::printf("  %-6s %.1f us/step (%.0f %% of the step), %.2f GB/s, %s\n", r.row.kernel.c_str(), r.time_per_step_us,
                r.step_share_pct, r.row.bandwidth_gbs, r.row.bottleneck.c_str());

  // The row is bwprof's row: print its columns, and check its figure is bytes / median time.
  for (const auto& kv : m.record()) {
    if (kv.first == "bandwidth_gbs" || kv.first == "bytes_source" || kv.first == "variant")
      std::printf("  %s = %s\n", kv.first.c_str(),
                  std::holds_alternative<std::string>(kv.second) ? std::get<std::string>(kv.second).c_str()
                                                                 : std::to_string(std::get<double>(kv.second)).c_str());
  }
  const double expect = (m.bytes_read + m.bytes_written) / (m.time_us.median * 1e-6) / 1e9;
  if (!(std::fabs(m.bandwidth_gbs - expect) <= 1e-9 * expect) || m.variant != "user" || !(m.bandwidth_gbs > 0)) {
    std::printf("FAIL: bandwidth_gbs %.6g, bytes / median time %.6g\n", m.bandwidth_gbs, expect);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // bwprof's errors say what failed (an absent device, a bad count)
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
