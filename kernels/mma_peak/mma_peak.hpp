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
// halved (multiply-adds), times a x b, shared equally by its threads.
inline double mma_expected_per_thread(MmaType t, std::int64_t iters) {
  const MmaOperands o = mma_operands(t);
  return mma_step_flops(t) / 2.0 * static_cast<double>(iters) * o.a * o.b / kMmaPeakThreads;
}

// The variant's factory (family.cpp registers it; GPU builds only).
std::unique_ptr<KernelInstance> make_mma_peak_gpu(Backend&, const Problem&);

}  // namespace bwprof
