// Holding the stream while the timed work is queued (nvbench's blocking kernel): a one-thread kernel
// spins on a flag in host memory that the GPU reads directly; the host queues the start event, the
// timed launches and the stop event behind it, then sets the flag. The events then time the work
// alone, however long the host took to queue it. Work that makes the host wait on the GPU (a
// synchronous call inside a launch) would never let the host set the flag: the kernel gives up after
// a timeout and says so, and that timing is thrown away.
#include <atomic>

#include "gpu/gpu_backend.hpp"

namespace bwprof {

namespace {
__global__ void bwprof_hold_stream(const volatile int* release, volatile int* timed_out, long long max_cycles) {
  const long long t0 = clock64();
  while (*release == 0) {
    if (clock64() - t0 > max_cycles) {
      *timed_out = 1;
      return;
    }
  }
}
}  // namespace

StreamHold::StreamHold(double clock_mhz, double timeout_s) {
  void* p = nullptr;
  BWPROF_GPU_CHECK(hipHostMalloc(&p, 2 * sizeof(int), hipHostMallocMapped));
  host_ = static_cast<int*>(p);
  host_[0] = host_[1] = 0;
  void* d = nullptr;
  BWPROF_GPU_CHECK(hipHostGetDevicePointer(&d, p, 0));
  device_ = static_cast<int*>(d);
  // Cycles at the highest SM clock: at a lower clock the wait is longer, never shorter.
  max_cycles_ = static_cast<long long>(timeout_s * std::max(clock_mhz, 100.0) * 1e6);
}

StreamHold::~StreamHold() {
  if (host_) (void)hipHostFree(host_);
}

void StreamHold::hold(hipStream_t stream) {
  volatile int* h = host_;
  h[0] = 0;
  h[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bwprof_hold_stream<<<1, 1, 0, stream>>>(device_, device_ + 1, max_cycles_);
  BWPROF_CHECK_LAUNCH("bwprof_hold_stream");
}

void StreamHold::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  static_cast<volatile int*>(host_)[0] = 1;
}

bool StreamHold::timed_out() const { return static_cast<volatile int*>(host_)[1] != 0; }

}  // namespace bwprof
