// Fill: a constant written into every element of a buffer, the write-only end of memory traffic.
#pragma once
#include <memory>

#include "bwprof/host_tensor.hpp"
#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// The constant (exact in FP16 too), and the value the buffer holds before the kernel runs: an
// element the kernel misses keeps the poison and fails the check.
constexpr float kFillValue = 0.75f, kFillPoison = -2.0f;

struct FillData {
  HostTensor y;
};
FillData make_fill_data(const Problem& p);
// Every element, not a sample: a fill that skips one element is wrong.
Check fill_check(const FillData& d, const Problem& p);

// The variants' factories (family.cpp registers them; the GPU one exists in GPU builds only).
std::unique_ptr<KernelInstance> make_fill_cpu(Backend&, const Problem&);
std::unique_ptr<KernelInstance> make_fill_gpu(Backend&, const Problem&);

}  // namespace bwprof
