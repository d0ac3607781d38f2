// What keeps one measurement from taking the machine: a problem's memory, from its family's
// footprint, against what the host and the device have free; and the work of one launch, from its
// traffic, against a time bound. admit() checks both before the runner makes an instance (the
// peaks policy, whose shapes are its own and quick, checks the memory), so a shape that cannot run
// is an exception, never an OOM kill or a launch that runs for hours.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>

#include "bwprof/backend.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {

// Host memory available now (MemAvailable from /proc/meminfo, else sysconf), at most
// BWPROF_MEMORY_LIMIT bytes when that is set.
double available_host_bytes();
// The device's free memory (Backend::free_device_bytes), at most BWPROF_MEMORY_LIMIT; negative
// for a backend without memory of its own.
double available_device_bytes(Backend& backend);

// The bytes an instance of `p` holds on a backend kind: the family's footprint, or (a family that
// declares none) its traffic's bytes.
Footprint footprint_of(const KernelFamily& k, const Problem& p, const std::string& backend_kind);
// OutOfMemory, naming the kernel, the shape, what it needs and what is available, when the
// footprint does not fit (host: 90 % of what is available; device: 95 % of its free memory).
void check_memory(const KernelFamily& k, const Problem& p, Backend& backend);

// The fewest seconds one launch of `p` can take on `info`: its bytes at the peak bandwidth or its
// FLOPs at the peak compute, whichever is longer. A GPU's peaks are its datasheet's (generous
// defaults for an architecture bwprof does not know); the CPU's are assumed per thread, above
// what one thread does (kCpuGbsPerThread, kCpuGflopsPerThread).
double min_launch_seconds(const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info);
constexpr double kCpuGbsPerThread = 8, kCpuGflopsPerThread = 32;
// The bound on one launch: 10 s on a GPU, 60 s on the CPU, or BWPROF_MAX_LAUNCH_S seconds
// (InvalidArgument for a value that is not a positive number; "inf" lifts the bound).
double max_launch_seconds(const DeviceInfo& info);
// InvalidArgument naming the kernel, the shape, the estimate and the bound when one launch would
// take longer than the bound.
void check_work(const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info);

// InvalidArgument naming max_total_s when a call whose first launch took `first_s` (after
// `elapsed_s` of the call) would take more than `bound_s` with `launches_left` launches to come:
// the bound on one launch (check_work) does not bound a call of many.
void check_total_time(double elapsed_s, double first_s, int launches_left, double bound_s);

// check_memory, then check_work: the runner calls it before making an instance.
void admit(Backend& backend, const KernelFamily& k, const Variant& v, const Problem& p);

// Bytes held now, and the most held at once since reset_peak(). HostTensor and HostBytes report
// to host_memory_counter(), the GPU backend's device buffers to device_memory_counter(); the tests
// hold the families' footprints to them.
class MemoryCounter {
 public:
  void add(std::size_t bytes);
  void remove(std::size_t bytes) { in_use_ -= bytes; }
  std::size_t in_use() const { return in_use_.load(); }
  std::size_t peak() const { return peak_.load(); }
  void reset_peak() { peak_.store(in_use_.load()); }

 private:
  std::atomic<std::size_t> in_use_{0}, peak_{0};
};
MemoryCounter& host_memory_counter();
MemoryCounter& device_memory_counter();

}  // namespace bwprof
