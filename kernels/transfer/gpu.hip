// Transfers on the GPU: one runtime call per launch on the backend's stream (a copy between host
// and device, a device-to-device copy or a memset), timed by the backend's events like a kernel.
#include <cstring>
#include <string>

#include "bwprof/error.hpp"
#include "bwprof/host_tensor.hpp"
#include "gpu/gpu_backend.hpp"
#include "transfer/transfer.hpp"

namespace bwprof {

namespace {

// Page-locked host memory (the runtime's pinned allocation), so copies run as DMA straight from it.
class PinnedBuffer {
 public:
  PinnedBuffer(std::size_t bytes, const char* what) {
    ensure_host_memory(static_cast<double>(bytes), what);
    hipError_t e = hipHostMalloc(&ptr_, bytes ? bytes : 16, hipHostMallocDefault);
    if (e != hipSuccess) {
      (void)hipGetLastError();
      ptr_ = nullptr;
      throw OutOfMemory(std::string("out of pinned host memory allocating ") + what + " (" +
                        std::to_string(bytes) + " bytes): " + hipGetErrorString(e));
    }
  }
  ~PinnedBuffer() {
    if (ptr_) (void)hipHostFree(ptr_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  std::uint8_t* get() const { return static_cast<std::uint8_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

enum class Kind { kH2D, kD2H, kD2D, kMemset };

Kind kind_of(const std::string& kernel) {
  if (kernel == "h2d") return Kind::kH2D;
  if (kernel == "d2h") return Kind::kD2H;
  if (kernel == "d2d") return Kind::kD2D;
  return Kind::kMemset;
}

class TransferGpu final : public KernelInstance {
 public:
  TransferGpu(GpuBackend& g, const Problem& p) : g_(g), kind_(kind_of(p.kernel)) {
    n_ = static_cast<std::size_t>(p.i("bytes"));
    const bool host = kind_ == Kind::kH2D || kind_ == Kind::kD2H;
    if (host) {
      if (p.variant == "pinned") {
        pinned_ = std::make_unique<PinnedBuffer>(n_, "pinned host buffer");
        host_ = pinned_->get();
      } else {
        pageable_ = HostBytes(n_, "pageable host buffer");
        host_ = pageable_.data();
      }
      link_ = g.info().host_link;
    }
    expect_ = HostBytes(n_, "expected bytes");
    fill_random_bytes(expect_.data(), n_, 0x7a11 + n_);
    dev_ = DeviceBuffer(n_, "transfer device buffer");
    switch (kind_) {
      case Kind::kH2D:  // the host holds the data; the device buffer starts poisoned
        std::memcpy(host_, expect_.data(), n_);
        BWPROF_GPU_CHECK(hipMemsetAsync(dev_.get(), 0xee, n_, g.stream()));
        break;
      case Kind::kD2H:
        dev_.upload(expect_.data(), n_);
        std::memset(host_, 0xee, n_);
        break;
      case Kind::kD2D:
        src_ = DeviceBuffer(n_, "transfer source buffer");
        src_.upload(expect_.data(), n_);
        BWPROF_GPU_CHECK(hipMemsetAsync(dev_.get(), 0xee, n_, g.stream()));
        break;
      case Kind::kMemset:
        BWPROF_GPU_CHECK(hipMemsetAsync(dev_.get(), 0xee, n_, g.stream()));
        break;
    }
    g.synchronize();
  }

  void launch() override {
    hipStream_t s = g_.stream();
    switch (kind_) {
      case Kind::kH2D:
        BWPROF_GPU_CHECK(hipMemcpyAsync(dev_.get(), host_, n_, hipMemcpyHostToDevice, s));
        break;
      case Kind::kD2H:
        BWPROF_GPU_CHECK(hipMemcpyAsync(host_, dev_.get(), n_, hipMemcpyDeviceToHost, s));
        break;
      case Kind::kD2D:
        BWPROF_GPU_CHECK(hipMemcpyAsync(dev_.get(), src_.get(), n_, hipMemcpyDeviceToDevice, s));
        break;
      case Kind::kMemset:
        BWPROF_GPU_CHECK(hipMemsetAsync(dev_.get(), kMemsetByte, n_, s));
        break;
    }
  }

  Check check() override {
    g_.synchronize();
    if (kind_ == Kind::kD2H) return bytes_check(host_, expect_.data(), n_);
    HostBytes got(n_, "transfer check buffer");
    dev_.download(got.data(), n_);
    if (kind_ == Kind::kMemset) return bytes_check(got.data(), nullptr, n_, kMemsetByte);
    return bytes_check(got.data(), expect_.data(), n_);
  }

  Link link() const override { return link_; }

 private:
  GpuBackend& g_;
  Kind kind_;
  std::size_t n_ = 0;
  std::unique_ptr<PinnedBuffer> pinned_;
  HostBytes pageable_;
  std::uint8_t* host_ = nullptr;
  HostBytes expect_;
  DeviceBuffer dev_, src_;
  Link link_;
};

}  // namespace

std::unique_ptr<KernelInstance> make_transfer_gpu(Backend& b, const Problem& p) {
  return std::make_unique<TransferGpu>(as_gpu(b), p);
}

}  // namespace bwprof
