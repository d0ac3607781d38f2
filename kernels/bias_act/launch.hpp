// The bias + activation pass as other families launch it (GPU compilers only): the unfused GEMM
// runs its plain GEMM, then this kernel over C.
#pragma once
#include <cstddef>

#include "bwprof/kernel.hpp"
#include "common/gpu_runtime.hpp"
#include "common/reference.hpp"

namespace bwprof {

// y = act(x + bias[col]) over n elements of rows `cols` wide; bias may be null (activation only,
// in place when x == y).
void launch_bias_act(DType dtype, const void* x, const void* bias, void* y, std::size_t n, int cols, Act act,
                     int sms, hipStream_t stream);
Resources bias_act_resources(DType dtype, Act act);

}  // namespace bwprof
