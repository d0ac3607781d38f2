// The GPU backend's host side, as kernels see it: device buffers, the stream, launch checks.
// Compiled by nvcc or hipcc only (it includes the runtime through kernels/common/gpu_runtime.hpp).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/host_tensor.hpp"
#include "common/gpu_runtime.hpp"
#include "gpu/clocks.hpp"

namespace bwprof {

// Device memory owned by one object; allocation failure is OutOfMemory naming `what`.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const char* what);
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  template <class T = void> T* get() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t n);
  void download(void* dst, std::size_t n) const;
  // Sets every byte to `value` and returns once the device memory holds it (see upload).
  void fill(int value);
  // Copies of whole host tensors / byte arrays.
  static DeviceBuffer from(const HostTensor& t, const char* what);
  static DeviceBuffer from(const HostBytes& b, const char* what);
  void to(HostTensor& t) const { download(t.data(), t.bytes()); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class GpuBackend;
GpuBackend& as_gpu(Backend& b);  // InvalidArgument if `b` is not a GPU backend

// Keeps `blocks` warps (one an SM) busy for `cycles` clock cycles, touching no memory.
void gpu_spin(long long cycles, int blocks, hipStream_t stream);

// Holds a stream behind a kernel that waits for the host (see stream_hold.hip).
class StreamHold {
 public:
  StreamHold(double clock_mhz, double timeout_s);
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  void hold(hipStream_t stream);  // queue the waiting kernel
  void release();                 // let it end: everything queued behind it runs
  bool timed_out() const;         // after the stream is synchronized: did it give up waiting?

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
  long long max_cycles_ = 0;
};

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(int ordinal);
  ~GpuBackend() override;
  const DeviceInfo& info() const override { return info_; }
  double time_launch_us(KernelInstance& k, int launches) override;
  void flush_cache(KernelInstance& k) override;
  // The L2 flush that cold runs get (write 2x the L2, then read another buffer), on the stream.
  void flush_l2();
  // The ~20 us spin queued ahead of every start event (see time_launch_us).
  void spin_before_timing() { gpu_spin(spin_cycles_, spin_blocks_, stream_); }
  // How a timed launch waits for the host to queue it: "spin" (a fixed ~20 us of busy GPU ahead of
  // the start event) or "block" (a kernel that holds the stream until everything is queued).
  // Built-in kernels spin; profile() takes either (its stream_hold argument, "block" by default; the
  // measured comparison is in docs/design-notes.md).
  const char* stream_hold() const override { return block_ ? "block" : "spin"; }
  void set_stream_hold(const std::string& how) override;
  void synchronize() override;
  void activate() override;  // hipSetDevice(ordinal)
  double free_device_bytes() override;
  // The launches of `body`, captured from the stream into a graph and replayed by launch().
  std::unique_ptr<KernelInstance> capture(std::function<void()> body) override;
  // NVML (NVIDIA) or the driver's sysfs (AMD), where present (gpu/clocks.hpp).
  ClockSample sample_clock() override;

  // Timing on another stream (the user's code): the flush, the spin or hold and the events follow it.
  void* timing_stream() const override { return stream_; }
  void set_timing_stream(void* stream) override { stream_ = static_cast<hipStream_t>(stream); }
  void reset_timing_stream() override { stream_ = own_stream_; }
  void begin_region() override;
  double end_region_us() override;
  bool region_hold_timed_out() const override { return hold_timed_out_; }
  bool take_hold_gave_up() override {
    const bool g = hold_gave_up_;
    hold_gave_up_ = false;
    return g;
  }

  // Where this build has no GPU code for the device (gpu_code_missing(), or the runtime's refusal
  // of bwprof's own kernel), the message that says so and how to build for it; "" otherwise.
  const std::string& code_error() const { return code_error_; }

  // The stream bwprof's kernels launch on (the timing stream).
  hipStream_t stream() const { return stream_; }
  int ordinal() const { return ordinal_; }
  int sm_count() const { return info_.compute_units; }
  int warp_size() const { return warp_size_; }
  // Raise on a launch error right after a launch (cheap: no synchronization).
  static void check_launch(const char* kernel, const char* file, int line);

 private:
  int ordinal_;
  int warp_size_ = 32;
  std::string code_error_;
  long long spin_cycles_ = 40000;
  int spin_blocks_ = 1;
  DeviceInfo info_;
  hipStream_t stream_ = nullptr;      // the timing stream: own_stream_ unless set
  hipStream_t own_stream_ = nullptr;  // created by the backend
  hipEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer scrub_, clean_;
  std::unique_ptr<StreamHold> hold_;
  bool block_ = false;  // hold the stream with hold_ rather than spin ahead of it
  std::unique_ptr<ClockReader> clocks_;
  bool region_block_ = false;     // how the open region was started
  bool hold_timed_out_ = false;   // the last region's hold gave up waiting
  bool hold_gave_up_ = false;     // a timed launch fell back from the hold to the spin (take_hold_gave_up)
  double time_events_us();
  // A region's launches threw: let the held work run, wait for it, and leave the device usable.
  void abandon_region() noexcept;
};

// Reads `buf` through the L2 (cache_flush.hip).
void gpu_read_flush(const DeviceBuffer& buf, int sms, hipStream_t stream);
// Whether the current device has code for bwprof's own kernels: the runtime's answer for the spin
// kernel (cache_flush.hip, compiled like every general file), without launching anything.
hipError_t gpu_code_probe();


#define BWPROF_CHECK_LAUNCH(name) ::bwprof::GpuBackend::check_launch(name, __FILE__, __LINE__)

// Resources of a kernel function as the runtime reports them.
template <class F>
Resources kernel_resources(F* fn, int block_size, int dynamic_smem = 0) {
  hipFuncAttributes a{};
  BWPROF_GPU_CHECK(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(fn)));
  Resources r;
  r.block_size = block_size;
  r.registers_per_thread = a.numRegs;
  r.shared_mem_per_block = static_cast<int>(a.sharedSizeBytes) + dynamic_smem;
  BWPROF_GPU_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&r.runtime_blocks_per_sm, fn, block_size,
                                                                dynamic_smem));
  return r;
}

// Blocks for a grid-stride kernel: enough to fill every SM several times, never more than needed.
inline unsigned grid_for(std::size_t items, int block, int sms, int waves = 8) {
  std::size_t need = (items + block - 1) / block;
  std::size_t cap = static_cast<std::size_t>(sms) * waves;
  std::size_t g = need < cap ? need : cap;
  return static_cast<unsigned>(g > 0 ? g : 1);
}

}  // namespace bwprof
