// bwprof::Profiler::measure_step on the CPU (issue #43): a step made of scoped regions gives the
// step report's rows (each region's host time against the step's wall time, judged by the core)
// and its summary and verdict; bad steps are clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/profiler.hpp"

using bwprof::Profiler;

namespace {

void spin_us(double us) {  // busy host work of a known length (a sleep may oversleep a lot)
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

const bwprof::StepRegion& row_of(const bwprof::StepReport& r, const std::string& name) {
  for (const auto& x : r.regions)
    if (x.row.kernel == name) return x;
  throw std::runtime_error("no row " + name);
}

}  // namespace

TEST(StepRegions, RowsAreTheRegionsTimeAgainstTheStepsWall) {
  Profiler prof("step", "cpu");
  prof.set_warmup(1).set_repeats(5, 0.0);
  std::vector<float> a(1 << 16, 1.0f), b(1 << 16, 0.0f);
  const double nb = 4.0 * a.size();
  int runs = 0;
  bwprof::StepReport r = prof.measure_step([&] {
    ++runs;
    for (int i = 0; i < 2; ++i) {
      Profiler::Region copy(prof, "copy", nb, nb, 0.0);
      for (std::size_t k = 0; k < a.size(); ++k) b[k] = a[k];
    }
    {
      Profiler::Region work(prof, "work");  // declares nothing: unknown bytes and FLOPs
      spin_us(400);
    }
    spin_us(100);  // in no region
  });
  EXPECT_EQ(runs, 1 + 5);
  EXPECT_EQ(r.repeats, 5);
  EXPECT_EQ(r.warmup, 1);
  EXPECT_EQ(r.device, "cpu");
  ASSERT_EQ(r.regions.size(), 2u);
  EXPECT_EQ(r.regions[0].row.kernel, "work");  // largest time per step first
  const auto& copy = row_of(r, "copy");
  const auto& work = row_of(r, "work");
  EXPECT_DOUBLE_EQ(copy.calls_per_step, 2.0);
  EXPECT_DOUBLE_EQ(work.calls_per_step, 1.0);
  EXPECT_DOUBLE_EQ(r.region_calls, 3.0);
  EXPECT_EQ(copy.row.time_us.count, 10);  // every call of every timed run
  EXPECT_EQ(work.row.time_us.count, 5);
  EXPECT_GE(work.row.time_us.min, 400.0);
  // Shares and the split against the wall time, by their definitions.
  for (const auto* x : {&copy, &work}) {
    EXPECT_NEAR(x->step_share_pct, 100.0 * x->time_per_step_us / r.wall_us, 1e-9);
    EXPECT_EQ(x->row.family, "region");
  }
  EXPECT_GT(r.wall_us, 500.0);
  EXPECT_GT(r.busy_us, 400.0);
  EXPECT_GT(r.idle_us, 100.0 * 0.9);
  EXPECT_NEAR(r.busy_pct, 100.0 * r.busy_us / (r.busy_us + r.idle_us), 1e-9);
  // The declared row: bwprof's row of the declared traffic, judged by the core.
  EXPECT_EQ(copy.row.bytes_source, "declared");
  EXPECT_EQ(copy.row.flops_source, "declared");
  EXPECT_DOUBLE_EQ(copy.row.bytes_read, nb);
  EXPECT_NEAR(copy.row.bandwidth_gbs, 2 * nb / (copy.row.time_us.median * 1e-6) / 1e9,
              1e-9 * copy.row.bandwidth_gbs);
  EXPECT_NE(copy.row.bound, "");
  EXPECT_NE(copy.row.bound, "unknown");  // a CPU peak is known; 0 FLOPs: judged by bandwidth
  // The undeclared row: its time, nothing judged.
  EXPECT_EQ(work.row.bytes_source, "unknown");
  EXPECT_EQ(work.row.bound, "unknown");
  EXPECT_EQ(work.row.bottleneck.rfind("bytes and FLOPs unknown", 0), 0u) << work.row.bottleneck;
  // Regions take most of the step: the verdict is the bound holding the most region time (work's).
  EXPECT_EQ(r.verdict, "unknown");
  EXPECT_EQ(r.verdict_text.rfind("unknown: the regions take ", 0), 0u) << r.verdict_text;
}

TEST(StepRegions, AStepMostlyOutsideItsRegionsIsHostBound) {
  Profiler prof("host", "cpu");
  prof.set_warmup(0).set_repeats(3, 0.0);
  bwprof::StepReport r = prof.measure_step([&] {
    {
      Profiler::Region g(prof, "gemm", 1e6, 1e6, 1e6);
      spin_us(50);
    }
    spin_us(1000);
  });
  EXPECT_LT(r.busy_pct, bwprof::kHostBoundBusyPct);
  EXPECT_EQ(r.verdict, "host-bound");
  EXPECT_EQ(r.verdict_text.rfind("host-bound: the regions take ", 0), 0u) << r.verdict_text;
  EXPECT_NE(r.verdict_text.find("; 1 region calls; the regions alone take"), std::string::npos) << r.verdict_text;
}

TEST(StepRegions, BadStepsAreClearErrors) {
  Profiler prof("bad", "cpu");
  prof.set_warmup(0).set_repeats(2, 0.0);
  // A region outside a step does nothing; a step without regions is an error.
  { Profiler::Region idle(prof, "outside", 1, 1, 1); }
  try {
    prof.measure_step([] {});
    FAIL() << "no error";
  } catch (const bwprof::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("step: it ran no region"), std::string::npos) << e.what();
  }
  // Regions do not nest.
  try {
    prof.measure_step([&] {
      Profiler::Region outer(prof, "outer");
      Profiler::Region inner(prof, "inner");
    });
    FAIL() << "no error";
  } catch (const bwprof::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("region 'inner': opened inside region 'outer'"), std::string::npos)
        << e.what();
  }
  // A region left open (not scoped) at the end of the step.
  std::unique_ptr<Profiler::Region> leak;
  try {
    prof.measure_step([&] { leak = std::make_unique<Profiler::Region>(prof, "leak"); });
    FAIL() << "no error";
  } catch (const bwprof::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("region 'leak': opened in the step and never closed"), std::string::npos)
        << e.what();
  }
  leak.reset();  // closes nothing: the step is over
  // The step's own exception leaves unchanged, and the profiler measures again afterwards.
  EXPECT_THROW(prof.measure_step([&] {
    Profiler::Region r(prof, "r");
    throw std::logic_error("the user's");
  }),
               std::logic_error);
  bwprof::StepReport ok = prof.measure_step([&] { Profiler::Region r(prof, "r", 8, 8, 0); });
  EXPECT_EQ(ok.regions.size(), 1u);
  // Bad declarations and nested steps.
  EXPECT_THROW(Profiler::Region(prof, "", 1, 1, 1), bwprof::InvalidArgument);
  EXPECT_THROW(Profiler::Region(prof, "neg", -1, 1, 1), bwprof::InvalidArgument);
  EXPECT_THROW(Profiler::Region(prof, "inf", 1, INFINITY, 1), bwprof::InvalidArgument);
  bwprof::RegionTraffic t;
  t.dtype = "int4";
  EXPECT_THROW(Profiler::Region(prof, "dtype", t), bwprof::InvalidArgument);
  EXPECT_THROW(prof.measure_step([&] { prof.measure_step([&] { Profiler::Region r(prof, "x"); }); }),
               bwprof::InvalidArgument);
  EXPECT_THROW(prof.measure_step(std::function<void()>()), bwprof::InvalidArgument);
}
