// The matrix units' compute roof per arithmetic type: chains of independent MMAs held in
// registers (wgmma reads its operands from shared memory, as every Hopper GEMM does), no memory
// traffic in the loop, one value per thread written at the end. The peaks policy measures it
// (Ceiling::kMatrix). Every engine does the same work per block and step, so the FLOP count and
// the expected output are the same formulas whichever engine ran.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bwprof/kernel.hpp"

namespace bwprof {

// The arithmetic types, and the K of a "unit" MMA of each (16 for the 16-bit types, 8 for TF32,
// 32 for the 8-bit ones): one block of kMmaPeakThreads does 2^19 x K multiply-add FLOPs per step.
enum class MmaType { kF16, kBF16, kTF32, kFP8, kINT8 };
constexpr int kMmaPeakThreads = 256;
MmaType parse_mma_type(const std::string& name);  // InvalidArgument for another name
const char* to_string(MmaType t);
int mma_unit_k(MmaType t);
inline double mma_step_flops(MmaType t) { return 524288.0 * mma_unit_k(t); }

// The operands: every A element is a, every B element is b (exact in each type), so every
// output element gains K x a x b per MMA whatever the fragment layout. Their bit patterns,
// repeated to fill 32 bits: FP16 1.5 / -0.5, BF16 1.5 / -0.5, TF32 1.5 / -0.25, FP8 (e4m3) 1.5 /
// -0.5, INT8 3 / -2.
struct MmaOperands {
  double a, b;
  std::uint32_t a_bits, b_bits;
};
MmaOperands mma_operands(MmaType t);

// What each thread's sum of its accumulators must be after `iters` steps: the block's FLOPs
// halved (multiply-adds), times a x b, shared equally by its threads. Restarting the chains (below)
// does not change it: each chain's partial sum is added into the thread's FP32 total before the
// chain starts again from zero, so the total still holds every product once.
inline double mma_expected_per_thread(MmaType t, std::int64_t iters) {
  const MmaOperands o = mma_operands(t);
  return mma_step_flops(t) / 2.0 * static_cast<double>(iters) * o.a * o.b / kMmaPeakThreads;
}

// ---- Exact chains in a narrow accumulator ----------------------------------------------------
// Hopper's FP8 MMAs add into an accumulator narrower than FP32: the products are aligned to the
// largest exponent among them and the running sum and cut to about 13 fraction bits. On an H100 an
// FP8 chain of products of 0.75 stalled at 8192 (64 steps came out 33 % short, 512 steps 92 %),
// as such an accumulator predicts (tests/cpp/mma_peak_test.cpp models it). So no chain may grow
// past what its accumulator holds exactly: every `restart` steps each thread adds its accumulators
// into an FP32 total (exact: they are multiples of the products' finest bit, well below 2^24 of
// them) and the chain starts again from zero with the next MMA (wgmma's scale-d = 0, or zeroed
// registers); the MMAs stay the same instructions and the timed work stays the counted work.

// The fraction bits the type's accumulation keeps: 13 for FP8 (Hopper's, the narrowest measured;
// held to on every architecture), 23 (FP32) for FP16 / BF16 / TF32, 31 for INT8 (an exact 32-bit
// integer while the sum stays below 2^31).
int mma_accumulator_bits(MmaType t);

// The products each accumulator element gains per step under `engine` ("wgmma", "mma_sync",
// "mfma", "wmma"): a step is the same FLOPs per block everywhere, spread over each engine's
// accumulators (wgmma 8 MMAs of K on one 64x256 chain per warpgroup; mma.sync 32 MMAs of K on
// each of 8 16x8 chains per warp; MFMA 16 K per 32x32 chain, 4 per wave; WMMA 32 K per 16x16
// chain, 4 per wave). InvalidArgument for another engine.
std::int64_t mma_products_per_step(const std::string& engine, MmaType t);
// Accumulator elements each thread holds under `engine` (the values it adds into its total).
int mma_accumulators_per_thread(const std::string& engine);

// The power of two of the finest bit of a dyadic rational v > 0 (0.75 -> 0.25, 6 -> 2, 24 -> 8).
double finest_bit(double v);

// The most steps a chain of `products_per_step` products a x b per accumulator element can run
// with every partial sum exact in the type's accumulator: for a float accumulator of m fraction
// bits, the sum S must keep its last bit at or below the products' finest bit g, i.e.
// S < 2^(m + 1) g; for INT8 |S| <= 2^31 - 1. At least 1 (one step is always exact).
std::int64_t mma_exact_steps(MmaType t, std::int64_t products_per_step);

// The restart period a run uses: `asked` steps if > 0, else the longest exact chain for the
// engine, never more than `iters`.
std::int64_t mma_restart_steps(MmaType t, const std::string& engine, std::int64_t iters, std::int64_t asked);

// The variant's factory (family.cpp registers it; GPU builds only).
std::unique_ptr<KernelInstance> make_mma_peak_gpu(Backend&, const Problem&);

}  // namespace bwprof
