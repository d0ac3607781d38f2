// The matrix peak's expected-value arithmetic on the CPU: the restart periods (mma_peak.hpp) and
// what a narrow accumulator makes of the chains. The model: each MMA aligns its K products and the
// running sum to the largest exponent among them and cuts them to `bits` fraction bits, then cuts
// the sum to the same (truncation toward zero). With 13 bits it reproduces the H100's FP8 runs
// before the restarts: products of 0.75 stalled at 8192, 64 steps 33 % short, 512 steps 92 %.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "bwprof/error.hpp"
#include "mma_peak/mma_peak.hpp"

using namespace bwprof;

namespace {

double cut(double x, double ulp) { return std::trunc(x / ulp) * ulp; }

// One MMA's addition of `k` products `p` into `d` in an accumulator of `bits` fraction bits.
double narrow_mma(double d, double p, int k, int bits) {
  const double top = std::fmax(std::fabs(d), std::fabs(p));
  const double ulp = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(top))) - bits);
  double s = cut(d, ulp);
  for (int i = 0; i < k; ++i) s += cut(p, ulp);  // exact in a double at these sizes
  if (s == 0) return 0;
  return cut(s, std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::fabs(s)))) - bits));
}

// A thread's total after `iters` steps of `engine` restarting every `restart` steps, in the
// type's modelled accumulator, each chain's sum added into an FP32 total as the kernels do. Every
// accumulator element of a thread holds the same value, so one chain is simulated and scaled.
double simulated_total(MmaType t, const std::string& engine, std::int64_t iters, std::int64_t restart) {
  const MmaOperands o = mma_operands(t);
  const int k = mma_unit_k(t), bits = mma_accumulator_bits(t);
  const std::int64_t mmas_per_step = mma_products_per_step(engine, t) / k;
  const float per_thread = static_cast<float>(mma_accumulators_per_thread(engine));
  float total = 0.f;
  double d = 0;
  std::int64_t left = restart;
  for (std::int64_t it = 0; it < iters; ++it) {
    for (std::int64_t m = 0; m < mmas_per_step; ++m) d = narrow_mma(d, o.a * o.b, k, bits);
    if (--left == 0 || it + 1 == iters) {
      total += static_cast<float>(d) * per_thread;  // the FP32 add the kernel does
      d = 0, left = restart;
    }
  }
  return total;
}

}  // namespace

TEST(MmaPeakArithmetic, FinestBitOfTheProducts) {
  EXPECT_EQ(finest_bit(0.75), 0.25);
  EXPECT_EQ(finest_bit(-0.375), 0.125);
  EXPECT_EQ(finest_bit(6), 2);
  EXPECT_EQ(finest_bit(24), 8);
  EXPECT_EQ(finest_bit(1), 1);
  EXPECT_THROW(finest_bit(0), InvalidArgument);
  EXPECT_THROW(finest_bit(NAN), InvalidArgument);
}

TEST(MmaPeakArithmetic, ProductsPerStepMakeTheSameFlopsOnEveryEngine) {
  // A block's step is 2^19 x K FLOPs: per accumulator element, the products per step times the
  // elements the block holds (threads x accumulators per thread) times 2 must be that.
  for (MmaType t : {MmaType::kF16, MmaType::kBF16, MmaType::kTF32, MmaType::kFP8, MmaType::kINT8})
    for (const char* e : {"wgmma", "mma_sync", "mfma", "wmma"}) {
      const double flops = 2.0 * mma_products_per_step(e, t) * mma_accumulators_per_thread(e) * kMmaPeakThreads;
      EXPECT_EQ(flops, mma_step_flops(t)) << to_string(t) << " " << e;
    }
  EXPECT_THROW(mma_products_per_step("tensor", MmaType::kF16), InvalidArgument);
  EXPECT_THROW(mma_accumulators_per_thread("tensor"), InvalidArgument);
}

TEST(MmaPeakArithmetic, ExactStepsKeepTheSumsBelowTheAccumulatorsLastExactBit) {
  // FP8: 13 fraction bits, products of 0.75 (finest bit 1/4): sums below 2^14 / 4 = 4096.
  // wgmma adds 8 MMAs x 32 products x 0.75 = 192 per step: 21 steps (4032); mma.sync 768: 5.
  EXPECT_EQ(mma_exact_steps(MmaType::kFP8, mma_products_per_step("wgmma", MmaType::kFP8)), 21);
  EXPECT_EQ(mma_exact_steps(MmaType::kFP8, mma_products_per_step("mma_sync", MmaType::kFP8)), 5);
  EXPECT_EQ(mma_exact_steps(MmaType::kFP8, mma_products_per_step("mfma", MmaType::kFP8)), 10);
  // FP16 in FP32: 2^24 / 4 = 2^22 over 96 a step: 43690 steps, more than any run asks.
  EXPECT_EQ(mma_exact_steps(MmaType::kF16, mma_products_per_step("wgmma", MmaType::kF16)), 43690);
  // INT8 in INT32: 2^31 - 1 over 8 x 32 x 6 = 1536 a step.
  EXPECT_EQ(mma_exact_steps(MmaType::kINT8, mma_products_per_step("wgmma", MmaType::kINT8)), 1398101);
  EXPECT_EQ(mma_exact_steps(MmaType::kFP8, 1000000), 1);  // never below one step
  EXPECT_THROW(mma_exact_steps(MmaType::kFP8, 0), InvalidArgument);
  // The run's period: what was asked, else the exact length, never past the run.
  EXPECT_EQ(mma_restart_steps(MmaType::kFP8, "wgmma", 512, 0), 21);
  EXPECT_EQ(mma_restart_steps(MmaType::kFP8, "wgmma", 10, 0), 10);
  EXPECT_EQ(mma_restart_steps(MmaType::kFP8, "wgmma", 512, 64), 64);
  EXPECT_EQ(mma_restart_steps(MmaType::kF16, "wgmma", 512, 0), 512);
  EXPECT_EQ(mma_restart_steps(MmaType::kF16, "mma_sync", 3, 1000), 3);
}

TEST(MmaPeakArithmetic, TheNarrowAccumulatorReproducesTheH100sShortFp8Sums) {
  // Before the restarts: one chain per run, as the H100 ran FP8 under wgmma.
  const double want512 = mma_expected_per_thread(MmaType::kFP8, 512);
  const double want64 = mma_expected_per_thread(MmaType::kFP8, 64);
  const double got512 = simulated_total(MmaType::kFP8, "wgmma", 512, 512);
  const double got64 = simulated_total(MmaType::kFP8, "wgmma", 64, 64);
  EXPECT_NEAR(1 - got512 / want512, 0.92, 0.01);  // the H100: 92 % short
  EXPECT_NEAR(1 - got64 / want64, 0.33, 0.01);    // the H100: 33 % short
  // One chain one step past the exact length already loses increments.
  const std::int64_t n = mma_exact_steps(MmaType::kFP8, mma_products_per_step("wgmma", MmaType::kFP8));
  EXPECT_NE(simulated_total(MmaType::kFP8, "wgmma", n + 1, n + 1), mma_expected_per_thread(MmaType::kFP8, n + 1));
  EXPECT_EQ(simulated_total(MmaType::kFP8, "wgmma", n, n), mma_expected_per_thread(MmaType::kFP8, n));
}

TEST(MmaPeakArithmetic, RestartedChainsAreExactForEveryTypeEngineAndRunLength) {
  // The peaks run's 512 steps, the tests' short runs, and lengths that end mid-period: the total
  // in the modelled accumulator equals the host's expected value exactly (not within a tolerance).
  for (MmaType t : {MmaType::kF16, MmaType::kBF16, MmaType::kTF32, MmaType::kFP8, MmaType::kINT8})
    for (const char* e : {"wgmma", "mma_sync", "mfma", "wmma"})
      for (std::int64_t iters : {1, 2, 3, 22, 43, 64, 512}) {
        const std::int64_t r = mma_restart_steps(t, e, iters, 0);
        const double want = mma_expected_per_thread(t, iters);
        EXPECT_EQ(simulated_total(t, e, iters, r), want) << to_string(t) << " " << e << " iters " << iters;
        EXPECT_EQ(static_cast<double>(static_cast<float>(want)), want) << "the expected total is an FP32 value";
      }
}
