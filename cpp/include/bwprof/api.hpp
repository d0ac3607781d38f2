// bwprof's public entry points: the built-in kernels and backends loaded once, devices by id,
// and one measurement by kernel name. Each function here loads the built-ins first, so a caller
// needs nothing else; core functions used directly (find_kernel, make_problem, run_repeats, ...)
// see the built-in kernels once load_builtins() has run.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/device.hpp"
#include "bwprof/kernel.hpp"
#include "bwprof/measurement.hpp"
#include "bwprof/registry.hpp"
#include "bwprof/runner.hpp"

namespace bwprof {

// Registers every built-in kernel family (kernels/*/family.cpp, collected by the build) in the
// registry, once per process (later calls return at once).
void load_builtins();

// Every kernel, in registry order.
const std::vector<KernelFamily>& kernel_registry();

// The backend for a device id ("auto", "cpu", "gpu", "gpu:0", "cuda:1", ...); kept open for the
// process. Unknown or absent devices: InvalidArgument listing what is there.
Backend& backend_for(const std::string& device_id);

// Every device this build can use, the CPU always last.
std::vector<DeviceInfo> list_devices();

// What this build was compiled with: "cpu" always, "cuda" or "hip" for the GPU backend, "sm90a"
// where the CUDA build carries Hopper's own code (wgmma in the `tensor` GEMM), "vendor_blas"
// where the GEMM `vendor` variant exists.
std::vector<std::string> build_features();

// The whole measurement of one kernel invocation on a device.
Measurement measure(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params,
                    const RunOptions& opt);

// The device's achievable and theoretical peaks for `dtype` (bwprof/peaks.hpp); `refresh`
// measures them again.
Peaks peaks(const std::string& device, const std::string& dtype, bool refresh = false);

}  // namespace bwprof
