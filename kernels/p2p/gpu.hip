// Peer copies on the GPU: buffers on both devices, the copy on this device's stream; both ways at
// once forks a stream of the peer off this stream and joins it back, so the backend's two events
// bracket both copies.
#include <string>

#include "bwprof/error.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/links.hpp"
#include "p2p/p2p.hpp"
#include "common/reference.hpp"

namespace bwprof {

namespace {

// Runs `f` with `device` current, then makes `back` current again (also when `f` throws).
template <class F>
void on_device(int device, int back, F&& f) {
  BWPROF_GPU_CHECK(hipSetDevice(device));
  try {
    f();
  } catch (...) {
    (void)hipSetDevice(back);
    throw;
  }
  BWPROF_GPU_CHECK(hipSetDevice(back));
}

void enable_peer(int from, int to) {
  hipError_t e = hipDeviceEnablePeerAccess(to, 0);
  if (e == hipErrorPeerAccessAlreadyEnabled) {
    (void)hipGetLastError();
    return;
  }
  if (e != hipSuccess) gpu_fail(e, "hipDeviceEnablePeerAccess", __FILE__, __LINE__);
  (void)from;
}

class P2pGpu final : public KernelInstance {
 public:
  P2pGpu(GpuBackend& g, const Problem& p) : g_(g), self_(g.ordinal()) {
    int count = 0;
    BWPROF_GPU_CHECK(hipGetDeviceCount(&count));
    const std::int64_t peer = p.i("peer");
    if (peer >= count)
      BWPROF_INVALID("peer: GPU " + std::to_string(peer) + " does not exist (this node has " + std::to_string(count) +
                     " GPU" + (count == 1 ? "" : "s") + "; a peer copy needs two)");
    if (peer == self_) BWPROF_INVALID("peer: must be another GPU than the measured one (gpu:" + std::to_string(self_) + ")");
    peer_ = static_cast<int>(peer);
    bi_ = p.s("direction") == "bi";
    n_ = static_cast<std::size_t>(p.i("bytes"));
    bool direct = false;
    link_ = peer_link(self_, peer_, &direct);
    if (bi_) {
      link_.gbs *= 2;  // both directions at once: twice the one-way figure
      link_.name += " (both ways)";
    }
    if (direct) {
      enable_peer(self_, peer_);
      on_device(peer_, self_, [&] { enable_peer(peer_, self_); });
    }
    expect_ = HostBytes(n_, "peer copy data");
    fill_random_bytes(expect_.data(), n_, 0x9e37 + n_);
    src_ = DeviceBuffer::from(expect_, "peer copy source");
    on_device(peer_, self_, [&] {
      dst_ = DeviceBuffer(n_, "peer copy destination");
      BWPROF_GPU_CHECK(hipMemsetAsync(dst_.get(), 0xee, n_, nullptr));
      if (bi_) {
        back_src_ = DeviceBuffer::from(expect_, "peer copy source (reverse)");
        BWPROF_GPU_CHECK(hipStreamCreateWithFlags(&peer_stream_, hipStreamNonBlocking));
        BWPROF_GPU_CHECK(hipEventCreateWithFlags(&join_, hipEventDisableTiming));
      }
      BWPROF_GPU_CHECK(hipDeviceSynchronize());
    });
    if (bi_) {
      back_dst_ = DeviceBuffer(n_, "peer copy destination (reverse)");
      BWPROF_GPU_CHECK(hipMemsetAsync(back_dst_.get(), 0xee, n_, g.stream()));
      BWPROF_GPU_CHECK(hipEventCreateWithFlags(&fork_, hipEventDisableTiming));
    }
    g.synchronize();
  }

  ~P2pGpu() override {
    (void)hipSetDevice(peer_);
    (void)hipDeviceSynchronize();
    dst_ = DeviceBuffer();
    back_src_ = DeviceBuffer();
    if (peer_stream_) (void)hipStreamDestroy(peer_stream_);
    if (join_) (void)hipEventDestroy(join_);
    (void)hipSetDevice(self_);
    if (fork_) (void)hipEventDestroy(fork_);
  }

  void launch() override {
    hipStream_t s = g_.stream();
    if (!bi_) {
      BWPROF_GPU_CHECK(hipMemcpyPeerAsync(dst_.get(), peer_, src_.get(), self_, n_, s));
      return;
    }
    BWPROF_GPU_CHECK(hipEventRecord(fork_, s));
    BWPROF_GPU_CHECK(hipStreamWaitEvent(peer_stream_, fork_, 0));
    BWPROF_GPU_CHECK(hipMemcpyPeerAsync(dst_.get(), peer_, src_.get(), self_, n_, s));
    BWPROF_GPU_CHECK(hipMemcpyPeerAsync(back_dst_.get(), self_, back_src_.get(), peer_, n_, peer_stream_));
    BWPROF_GPU_CHECK(hipEventRecord(join_, peer_stream_));
    BWPROF_GPU_CHECK(hipStreamWaitEvent(s, join_, 0));
  }

  Check check() override {
    g_.synchronize();
    HostBytes got(n_, "peer copy check buffer");
    dst_.download(got.data(), n_);
    Check c = bytes_check(got.data(), expect_.data(), n_);
    if (bi_ && c.ok) {
      back_dst_.download(got.data(), n_);
      c = bytes_check(got.data(), expect_.data(), n_);
    }
    return c;
  }

  Link link() const override { return link_; }

 private:
  GpuBackend& g_;
  int self_, peer_ = 0;
  bool bi_ = false;
  std::size_t n_ = 0;
  Link link_;
  HostBytes expect_;
  DeviceBuffer src_, dst_, back_src_, back_dst_;
  hipStream_t peer_stream_ = nullptr;
  hipEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace

std::unique_ptr<KernelInstance> make_p2p_gpu(Backend& b, const Problem& p) {
  return std::make_unique<P2pGpu>(as_gpu(b), p);
}

}  // namespace bwprof
