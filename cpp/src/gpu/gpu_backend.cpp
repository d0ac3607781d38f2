// The GPU backend: device events around the kernel alone, L2 flushed by writing a buffer twice
// its size, device properties and theoretical peaks from the architecture table (bwprof/arch.hpp).
#include "gpu/gpu_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bwprof/arch.hpp"
#include "bwprof/error.hpp"
#include "bwprof/limits.hpp"
#include "gpu/gpu_entry.hpp"
#include "gpu/links.hpp"

namespace bwprof {

[[noreturn]] void gpu_fail(hipError_t err, const char* call, const char* file, int line) {
  std::string msg = std::string(call) + " failed: " + hipGetErrorName(err) + ": " + hipGetErrorString(err);
  (void)hipGetLastError();  // clear a non-sticky error so the next call on this device works
  if (err == hipErrorOutOfMemory) throw OutOfMemory(located("out of device memory: " + msg, file, line));
  throw Error(located(msg, file, line));
}

// ---- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  hipError_t e = hipMalloc(&ptr_, bytes ? bytes : 16);
  if (e != hipSuccess) {
    (void)hipGetLastError();
    ptr_ = nullptr;
    char buf[256];
    std::snprintf(buf, sizeof buf, "out of device memory allocating %s (%.3g GB): %s", what, bytes / 1e9,
                  hipGetErrorString(e));
    if (e == hipErrorOutOfMemory) throw OutOfMemory(buf);
    throw Error(buf);
  }
  device_memory_counter().add(bytes_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) {
      (void)hipFree(ptr_);
      device_memory_counter().remove(bytes_);
    }
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    (void)hipFree(ptr_);
    device_memory_counter().remove(bytes_);
  }
}

void DeviceBuffer::upload(const void* src, std::size_t n) {
  BWPROF_GPU_CHECK(hipMemcpy(ptr_, src, n, hipMemcpyHostToDevice));
  // From pageable memory the copy returns once the data is staged; its last DMA can still be in
  // flight on the default stream, which the backend's non-blocking stream does not wait for. A
  // kernel launched right after construction read stale inputs (the GPU limits test caught it
  // with single launches of the intensity sweep), so the upload ends when the data is there.
  BWPROF_GPU_CHECK(hipStreamSynchronize(nullptr));
}
void DeviceBuffer::fill(int value) {
  BWPROF_GPU_CHECK(hipMemset(ptr_, value, bytes_));
  // hipMemset runs on the default stream, which the backend's non-blocking stream does not wait
  // for: a split-K counter zeroed this way was still being zeroed when the first launch read it
  // (wrong GEMM results only when eight test processes shared the H100), so the fill ends here.
  BWPROF_GPU_CHECK(hipStreamSynchronize(nullptr));
}
void DeviceBuffer::download(void* dst, std::size_t n) const {
  BWPROF_GPU_CHECK(hipMemcpy(dst, ptr_, n, hipMemcpyDeviceToHost));
}
DeviceBuffer DeviceBuffer::from(const HostTensor& t, const char* what) {
  DeviceBuffer b(t.bytes(), what);
  b.upload(t.data(), t.bytes());
  return b;
}
DeviceBuffer DeviceBuffer::from(const HostBytes& h, const char* what) {
  DeviceBuffer b(h.size(), what);
  b.upload(h.data(), h.size());
  return b;
}

// ---- device information ----------------------------------------------------------------------

int gpu_device_count() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) {
    (void)hipGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> make_gpu_backend(int ordinal) { return std::make_unique<GpuBackend>(ordinal); }

std::vector<std::string> gpu_code_architectures() {
  std::vector<std::string> out;
  for (std::string rest = gpu_code_architectures_csv(); !rest.empty();) {
    const auto comma = rest.find(',');
    out.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return out;
}

void gpu_require_code(const Backend& gpu) {
  if (auto* g = dynamic_cast<const GpuBackend*>(&gpu))
    if (!g->code_error().empty()) throw Error(g->code_error());
}

GpuBackend& as_gpu(Backend& b) {
  auto* g = dynamic_cast<GpuBackend*>(&b);
  if (!g) throw InvalidArgument("device: this kernel variant needs a GPU device");
  return *g;
}

GpuBackend::GpuBackend(int ordinal) : ordinal_(ordinal) {
  BWPROF_GPU_CHECK(hipSetDevice(ordinal));
  hipDeviceProp_t p;
  std::memset(&p, 0, sizeof p);
  BWPROF_GPU_CHECK(hipGetDeviceProperties(&p, ordinal));
  int mem_khz = 0, bus = 0, clk_khz = 0, l2 = 0;
  BWPROF_GPU_CHECK(hipDeviceGetAttribute(&mem_khz, hipDeviceAttributeMemoryClockRate, ordinal));
  BWPROF_GPU_CHECK(hipDeviceGetAttribute(&bus, hipDeviceAttributeMemoryBusWidth, ordinal));
  BWPROF_GPU_CHECK(hipDeviceGetAttribute(&clk_khz, hipDeviceAttributeClockRate, ordinal));
  BWPROF_GPU_CHECK(hipDeviceGetAttribute(&l2, hipDeviceAttributeL2CacheSize, ordinal));
  info_.id = "gpu:" + std::to_string(ordinal);
  info_.kind = "gpu";
  info_.name = p.name;
#ifdef BWPROF_HIP
  info_.vendor = "amd";
  info_.backend = "hip";
  info_.arch = p.gcnArchName;
  info_.arch = info_.arch.substr(0, info_.arch.find(':'));  // "gfx90a:sramecc+:xnack-" -> "gfx90a"
#else
  info_.vendor = "nvidia";
  info_.backend = "cuda";
  info_.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
  info_.compute_units = p.multiProcessorCount;
  warp_size_ = p.warpSize;
  info_.clock_mhz = clk_khz / 1e3;
  info_.memory_clock_mhz = mem_khz / 1e3;
  info_.memory_bus_bits = bus;
  info_.memory_bytes = static_cast<double>(p.totalGlobalMem);
  info_.cache_bytes = l2;
  // Double data rate: two transfers per memory clock over the whole bus.
  info_.bandwidth_theoretical_gbs = 2.0 * mem_khz * 1e3 * (bus / 8.0) / 1e9;
  if (const Arch* a = find_arch(info_.arch)) {
    const ArchRates rates = rates_for_device(*a, info_.name);  // GeForce: FP32 accumulation halved
    const double per_clock = info_.compute_units * info_.clock_mhz * 1e6 / 1e9;
    info_.fp32_gflops_theoretical = rates.fp32 * per_clock;
    info_.fp16_gflops_theoretical = rates.fp16 * per_clock;
    info_.fp16_matrix_gflops_theoretical = rates.fp16_matrix * per_clock;
    const std::pair<const char*, double> vector[] = {{"fp32", rates.fp32}, {"fp16", rates.fp16}, {"fp64", rates.fp64},
                                                     {"bf16", rates.bf16}};
    const std::pair<const char*, double> matrix[] = {{"fp16", rates.fp16_matrix}, {"bf16", rates.bf16_matrix},
                                                     {"tf32", rates.tf32_matrix}, {"fp8", rates.fp8_matrix},
                                                     {"int8", rates.int8_matrix}};
    for (auto& r : vector)
      if (r.second > 0) info_.vector_gflops_theoretical[r.first] = r.second * per_clock;
    for (auto& r : matrix)
      if (r.second > 0) info_.matrix_gflops_theoretical[r.first] = r.second * per_clock;
  }
  // Code for this GPU: by the architectures built, then by the runtime itself (it also refuses code
  // a driver older than the compiler cannot load). Said by the first use, not while listing.
  const std::string gpu = info_.id + " (" + info_.name + ")";
  code_error_ = gpu_code_missing(gpu, info_.arch, gpu_code_architectures());
  if (code_error_.empty()) {
    const hipError_t probe = gpu_code_probe();
    if (probe != hipSuccess) {
      (void)hipGetLastError();
      code_error_ = gpu_code_missing(gpu, info_.arch, gpu_code_architectures(),
                                     std::string(hipGetErrorName(probe)) + ": " + hipGetErrorString(probe));
    }
  }
  info_.pci_bus_id = gpu_pci_bus_id(ordinal);
  info_.host_link = host_link_of(ordinal, info_.pci_bus_id, info_.arch);
  BWPROF_GPU_CHECK(hipStreamCreateWithFlags(&own_stream_, hipStreamNonBlocking));
  stream_ = own_stream_;
  BWPROF_GPU_CHECK(hipEventCreate(&start_));
  BWPROF_GPU_CHECK(hipEventCreate(&stop_));
  // Writing twice the L2 evicts whatever a previous run left there; reading a second such buffer
  // then leaves the L2 holding clean lines. Without the read, the timed kernel would pay for writing
  // back up to a whole L2 of the flush's dirty lines (about 50 MB on an H100, comparable to the
  // traffic of the short kernels measured here).
  const std::size_t flush_bytes = static_cast<std::size_t>(std::max(2.0 * l2, 32e6)) / 16 * 16;
  scrub_ = DeviceBuffer(flush_bytes, "L2 flush buffer");
  clean_ = DeviceBuffer(flush_bytes, "L2 clean buffer");
  BWPROF_GPU_CHECK(hipMemsetAsync(clean_.get(), 0, clean_.bytes(), stream_));
  // ~20 us of the spin ahead of each timed run (at the highest SM clock; longer at lower ones).
  spin_cycles_ = static_cast<long long>(20e-6 * std::max(info_.clock_mhz, 100.0) * 1e6);
  spin_blocks_ = info_.compute_units;  // every SM busy, as during a flush
  char pci[64] = {0};
  if (hipDeviceGetPCIBusId(pci, sizeof pci, ordinal) != hipSuccess) {
    (void)hipGetLastError();
    pci[0] = 0;
  }
  clocks_ = std::make_unique<ClockReader>(pci, info_.vendor);
}

void GpuBackend::set_stream_hold(const std::string& how) {
  if (how != "spin" && how != "block") throw InvalidArgument("stream_hold: expected 'spin' or 'block', got '" + how + "'");
  block_ = how == "block";
  hold_gave_up_ = false;
  if (block_ && !hold_) hold_ = std::make_unique<StreamHold>(info_.clock_mhz, 1.0);
}

GpuBackend::~GpuBackend() {
  if (start_) (void)hipEventDestroy(start_);
  if (stop_) (void)hipEventDestroy(stop_);
  if (own_stream_) (void)hipStreamDestroy(own_stream_);
}

void GpuBackend::check_launch(const char* kernel, const char* file, int line) {
  hipError_t e = hipGetLastError();
  if (e != hipSuccess) gpu_fail(e, kernel, file, line);
}

double GpuBackend::time_launch_us(KernelInstance& k, int launches) {
  auto timed = [&] {
    begin_region();
    try {
      for (int i = 0; i < launches; ++i) k.launch();
    } catch (...) {
      abandon_region();
      throw;
    }
    return end_region_us();
  };
  if (block_) {
    const double us = timed();
    if (!hold_timed_out_) return us;
    // The launch made the host wait on the GPU (a synchronous call inside it), so the hold could
    // not be released before its timeout: this timing is thrown away. Such work cannot be held:
    // this launch and the rest of the run are timed behind the spin, and the runner is told
    // (take_hold_gave_up) so that no sample taken under the hold stays beside them.
    block_ = false;
    hold_gave_up_ = true;
  }
  return timed();
}

void GpuBackend::begin_region() {
  region_block_ = block_;
  hold_timed_out_ = false;
  if (region_block_) {
    // nvbench's way: the work is queued behind a kernel that waits for the host, so the start
    // event fires only once everything is queued, however long queuing took.
    hold_->hold(stream_);
  } else {
    // The GPU spins for ~20 us before the start event, so that it is still busy when the host has
    // submitted the kernel: the events then time the kernel, not the host's launch call. Without
    // it a hot run (no flush ahead) of a short kernel also timed the submission, and came out
    // slower than a cold one (H100, FP16 GEMV 4096x4096: 17.3 us hot over rotated copies of W
    // against 15.1 us cold).
    spin_before_timing();
  }
  BWPROF_GPU_CHECK(hipEventRecord(start_, stream_));
}

double GpuBackend::end_region_us() {
  BWPROF_GPU_CHECK(hipEventRecord(stop_, stream_));
  if (region_block_) hold_->release();
  const double us = time_events_us();
  hold_timed_out_ = region_block_ && hold_->timed_out();
  return us;
}

void GpuBackend::abandon_region() noexcept {
  if (region_block_) hold_->release();
  (void)hipStreamSynchronize(stream_);
  (void)hipGetLastError();
}

double GpuBackend::time_events_us() {
  BWPROF_GPU_CHECK(hipEventSynchronize(stop_));
  check_launch("kernel launch", __FILE__, __LINE__);
  float ms = 0;
  BWPROF_GPU_CHECK(hipEventElapsedTime(&ms, start_, stop_));
  return ms * 1e3;
}

void GpuBackend::flush_cache(KernelInstance&) { flush_l2(); }

void GpuBackend::flush_l2() {
  BWPROF_GPU_CHECK(hipMemsetAsync(scrub_.get(), 0x5a, scrub_.bytes(), stream_));
  gpu_read_flush(clean_, info_.compute_units, stream_);
}

void GpuBackend::synchronize() { BWPROF_GPU_CHECK(hipStreamSynchronize(stream_)); }

void GpuBackend::activate() { BWPROF_GPU_CHECK(hipSetDevice(ordinal_)); }
double GpuBackend::free_device_bytes() {
  BWPROF_GPU_CHECK(hipSetDevice(ordinal_));
  std::size_t free = 0, total = 0;
  BWPROF_GPU_CHECK(hipMemGetInfo(&free, &total));
  return static_cast<double>(free);
}

ClockSample GpuBackend::sample_clock() { return clocks_->sample(); }

namespace {

// A captured graph of launches on the backend's stream, replayed by launch().
class GraphSequence final : public KernelInstance {
 public:
  GraphSequence(hipStream_t stream, hipGraph_t graph, hipGraphExec_t exec) : stream_(stream), graph_(graph), exec_(exec) {}
  ~GraphSequence() override {
    if (exec_) (void)hipGraphExecDestroy(exec_);
    if (graph_) (void)hipGraphDestroy(graph_);
  }
  void launch() override { BWPROF_GPU_CHECK(hipGraphLaunch(exec_, stream_)); }
  Check check() override { return {}; }

 private:
  hipStream_t stream_;
  hipGraph_t graph_;
  hipGraphExec_t exec_;
};

std::string gpu_error_text(hipError_t e) { return std::string(hipGetErrorName(e)) + ": " + hipGetErrorString(e); }

}  // namespace

std::unique_ptr<KernelInstance> GpuBackend::capture(std::function<void()> body) {
  synchronize();
  // Thread-local capture: only a call from this thread that would synchronize breaks it (a launch
  // that copies to the host, a vendor library that allocates), which is exactly what cannot be a graph.
  BWPROF_GPU_CHECK(hipStreamBeginCapture(stream_, hipStreamCaptureModeThreadLocal));
  hipGraph_t graph = nullptr;
  auto abandon = [&] {
    (void)hipStreamEndCapture(stream_, &graph);
    if (graph) (void)hipGraphDestroy(graph);
    (void)hipGetLastError();
  };
  try {
    body();
  } catch (const OutOfMemory&) {
    abandon();
    throw;
  } catch (const std::exception& e) {
    abandon();
    throw InvalidArgument(std::string("a launch failed during the stream capture: ") + e.what());
  }
  hipError_t err = hipStreamEndCapture(stream_, &graph);
  if (err != hipSuccess || !graph) {
    if (graph) (void)hipGraphDestroy(graph);
    (void)hipGetLastError();
    throw InvalidArgument("the launches could not be captured into a graph: " + gpu_error_text(err));
  }
  hipGraphExec_t exec = nullptr;
  err = hipGraphInstantiateWithFlags(&exec, graph, 0);
  if (err != hipSuccess) {
    (void)hipGraphDestroy(graph);
    (void)hipGetLastError();
    if (err == hipErrorOutOfMemory) gpu_fail(err, "hipGraphInstantiateWithFlags", __FILE__, __LINE__);
    throw InvalidArgument("the captured graph could not be instantiated: " + gpu_error_text(err));
  }
  return std::make_unique<GraphSequence>(stream_, graph, exec);
}

}  // namespace bwprof
