// The intensity sweep (the empirical roofline): host arrays, the CPU kernel and the gold.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// y[i] = x[i] after `fmas` steps of v = v * a + b: 2 * fmas FLOPs per element read and written.
// a = b = 0.5 keeps every value finite and every FMA necessary (no step can be folded away).
constexpr float kSweepA = 0.5f, kSweepB = 0.5f;
struct SweepData {
  HostTensor x, y;
};
SweepData make_sweep_data(const Problem& p);
void sweep_cpu(SweepData& d, const Problem& p);
Check sweep_check(const SweepData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU ones exist in GPU builds only).
std::unique_ptr<KernelInstance> make_intensity_sweep_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_intensity_sweep_gpu(Backend&, const Problem&);

}  // namespace bwprof
