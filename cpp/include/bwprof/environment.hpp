// The settings bwprof reads from the environment, all of them here (docs/environment.md lists them;
// a test fails when a kernel or core source reads one anywhere else): limits that hold for every
// measurement of a process, where to find a library, and two switches for tests. Kernel choices
// are never among them: those are parameters of their family, recorded in each row's shape.
// A variable unset or empty leaves the default (nothing); any other value it does not take is an
// InvalidArgument "NAME=value: expected what it takes", never a silent default for a typo.
#pragma once
#include <cstdint>
#include <optional>

namespace bwprof {
namespace env {

// BWPROF_MEMORY_LIMIT: bytes of host and device memory one instance may hold (bwprof/limits.hpp).
std::optional<double> memory_limit_bytes();
// BWPROF_MAX_LAUNCH_S: seconds one launch may take by its estimate (bwprof/limits.hpp).
std::optional<double> max_launch_seconds();
// BWPROF_CPU_THREADS: the CPU backend's threads (1 to 4096).
std::optional<int> cpu_threads();
// BWPROF_PEAK_ARRAY_BYTES: the bytes of each array of the GPU's memory-peak run (4096 to 2^40),
// smaller for a compute-sanitizer run where every access is checked.
std::optional<std::int64_t> peak_array_bytes();
// BWPROF_NCCL_LIBRARY: the collective library's file; BWPROF_NCCL_PATH: folders (':') to look
// for it in. nullptr: unset.
const char* nccl_library();
const char* nccl_path();
// BWPROF_NO_CLOCKS (set, to anything): no clock sampling during timed runs, for comparing runs with
// and without it.
bool no_clocks();
// BWPROF_SYSFS_ROOT: the folder that stands for /sys where PCIe links are read (tests point it at a
// fake tree); nullptr: unset.
const char* sysfs_root();

// The readers the settings above go through (environment_test.cpp checks them on a variable of
// its own): a whole decimal integer from lo to hi; a number above zero ("inf": no bound).
std::optional<std::int64_t> read_int(const char* name, std::int64_t lo, std::int64_t hi);
std::optional<double> read_positive(const char* name);

}  // namespace env
}  // namespace bwprof
