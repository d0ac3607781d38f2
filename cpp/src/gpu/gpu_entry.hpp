// Entry points of the GPU backend for code compiled without a GPU compiler.
#pragma once
#include <memory>

#include "bwprof/backend.hpp"

namespace bwprof {
// GPUs visible to this process; 0 (never an error) when there is no driver or no device.
int gpu_device_count();
std::unique_ptr<Backend> make_gpu_backend(int ordinal);
}  // namespace bwprof
