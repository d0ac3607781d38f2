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
// process. Unknown or absent devices: InvalidArgument listing what is there; a GPU this build has
// no code for: Error naming its architecture, those built and the command that builds for it.
Backend& backend_for(const std::string& device_id);

// A device's description, also for a GPU this build has no code for (device_info, devices()).
const DeviceInfo& device_info(const std::string& device_id);

// Every device this build can use, the CPU always last (those without code for them too).
std::vector<DeviceInfo> list_devices();

// The GPU architectures this build's code was built for: CUDA's in CMake's spelling ("80-real",
// "90a-real"), AMD targets ("gfx942"); empty without a GPU backend.
std::vector<std::string> gpu_architectures();

// What this build was compiled with: "cpu" always, "cuda" or "hip" for the GPU backend, "sm90a"
// where the CUDA build carries Hopper's own code (wgmma in the `tensor` GEMM), "vendor_blas"
// where the GEMM `vendor` variant exists.
std::vector<std::string> build_features();

// The whole measurement of one kernel invocation on a device.
Measurement measure(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params,
                    const RunOptions& opt);

// What the kernel's instance for these arguments runs on the device, where its variant chooses among
// kernels (KernelInstance::explain: kernel, tile, K split); empty where there is no choice. The
// arguments are checked as measure() checks them; nothing is timed.
std::string explain(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params);

// ---- links between GPUs and collectives (docs/multi-gpu.md) ----------------------------------
// The link between every ordered pair of GPUs of this process (a -> b, a != b), with whether the two
// reach each other's memory directly; empty without GPUs.
struct PeerLink {
  int a = 0, b = 0;
  Link link;
  bool direct = false;
};
std::vector<PeerLink> peer_links();
// The collective library's name, version and path; InvalidArgument naming the library when it
// cannot be loaded (or the build has no GPU backend).
std::string collective_library();
// A folder to look for the collective library in (the Python package adds the nvidia-nccl wheel's).
void collective_search_dir(const std::string& dir);
// Across processes: rank 0 makes a job id (128 bytes) and shares it; every rank joins with it on
// its GPU (`device`: "gpu:N"). Collectives then span the job until collective_leave_job().
std::string collective_job_id();
void collective_join_job(const std::string& id, int world_size, int rank, const std::string& device);
void collective_leave_job();

// The device's achievable and theoretical peaks for `dtype` (bwprof/peaks.hpp); `refresh`
// measures them again.
Peaks peaks(const std::string& device, const std::string& dtype, bool refresh = false);

}  // namespace bwprof
