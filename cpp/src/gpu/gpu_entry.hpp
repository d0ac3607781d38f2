// Entry points of the GPU backend for code compiled without a GPU compiler.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"

namespace bwprof {
// GPUs visible to this process; 0 (never an error) when there is no driver or no device.
int gpu_device_count();
std::unique_ptr<Backend> make_gpu_backend(int ordinal);
// Raises the GPU's code_error() (gpu_backend.hpp) where this build has no code for it: what every
// use of a GPU but listing it goes through (api/devices.cpp).
void gpu_require_code(const Backend& gpu);
// The architectures this build's GPU code was built for (CMake's CUDA spelling, "80-real",
// "90a-real", or AMD targets), from gpu_code_architectures_csv(), which CMakeLists.txt generates.
std::vector<std::string> gpu_code_architectures();
const char* gpu_code_architectures_csv();
}  // namespace bwprof
