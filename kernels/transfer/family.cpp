// Transfers: host-to-device and device-to-host copies (pinned and pageable host memory), a
// device-to-device copy and a memset through the runtime, 4 KB to 1 GB. GPU only: the CPU
// backend has no host link to measure, so the CPU lists them without an implementation.
#include "bwprof/registry.hpp"
#include "transfer/transfer.hpp"

namespace bwprof {

namespace {

// The suite's sizes: 4 KB (latency) to 1 GB (the link's sustained rate); --quick stops at 64 MB.
std::vector<SuiteConfig> sizes(std::vector<std::string> variants, std::vector<std::int64_t> full) {
  std::vector<SuiteConfig> out;
  for (std::int64_t b : full) {
    const std::int64_t quick = b > (64ll << 20) ? (64ll << 20) : b;
    out.push_back(SuiteConfig{"bytes={bytes:bin}", {{"bytes", b}}, {{"bytes", quick}}, variants, {DType::kF32}});
  }
  return out;
}

// After the inference kernels (bias_act: 80), before the measuring instruments (intensity_sweep: 90).
KernelFamily transfer(const char* name, const char* doc, int order) {
  KernelFamily k;
  k.name = name;
  k.family = "transfer";
  k.doc = doc;
  k.order = order;
  k.params = {int_param("bytes", "268435456", 1, kMaxElements, "bytes moved")};
  // Host: the copy's host buffer, the expected bytes and the check's copy; device: the buffer
  // (and the source of a device-to-device copy).
  k.footprint = [](const Problem& p, const std::string& kind) {
    const double b = static_cast<double>(p.i("bytes"));
    const bool host = p.kernel == "h2d" || p.kernel == "d2h";
    return Footprint{(host ? 3 : 2) * b, kind == "cpu" ? 0.0 : (p.kernel == "d2d" ? 2 : 1) * b};
  };
  // A copy moves bytes, whatever they hold: one dtype, so that a run does not repeat every size.
  k.dtypes = {DType::kF32};
  return k;
}

}  // namespace

void register_family_transfer(Registry& r) {
  const std::vector<std::int64_t> host_sizes = {4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1ll << 30};
  const std::vector<std::int64_t> device_sizes = {4 << 10, 1 << 20, 256 << 20, 1ll << 30};
  for (const char* dir : {"h2d", "d2h"}) {
    const bool h2d = dir[0] == 'h';
    KernelFamily k = transfer(dir,
                              h2d ? "host-to-device copy through the runtime, from pinned (page-locked) or pageable "
                                    "host memory; bound by the host link (PCIe, NVLink-C2C)"
                                  : "device-to-host copy through the runtime, into pinned or pageable host memory; "
                                    "bound by the host link (PCIe, NVLink-C2C)",
                              85);
    // The payload crosses the link once: counted as written at the destination, so bandwidth_gbs
    // is the link rate.
    k.traffic = [](const Problem& p) { return Traffic{0, static_cast<double>(p.i("bytes")), 0}; };
#ifdef BWPROF_WITH_GPU
    k.variants.push_back(Variant{"pinned", "gpu", make_transfer_gpu});
    k.variants.push_back(Variant{"pageable", "gpu", make_transfer_gpu});
#endif
    k.suite = sizes({"pinned", "pageable"}, host_sizes);
    r.add_family(std::move(k));
  }
  KernelFamily d = transfer("d2d", "device-to-device copy through the runtime (hipMemcpyAsync / cudaMemcpyAsync): "
                                   "reads and writes device memory, like stream_copy", 85);
  d.traffic = [](const Problem& p) {
    const double b = static_cast<double>(p.i("bytes"));
    return Traffic{b, b, 0};
  };
  KernelFamily m = transfer("memset", "the runtime's memset (hipMemsetAsync / cudaMemsetAsync): writes device "
                                      "memory only, like fill", 85);
  m.traffic = [](const Problem& p) { return Traffic{0, static_cast<double>(p.i("bytes")), 0}; };
#ifdef BWPROF_WITH_GPU
  d.variants.push_back(Variant{"runtime", "gpu", make_transfer_gpu});
  m.variants.push_back(Variant{"runtime", "gpu", make_transfer_gpu});
#endif
  d.suite = sizes({}, device_sizes);
  m.suite = sizes({}, device_sizes);
  r.add_family(std::move(d));
  r.add_family(std::move(m));
}

}  // namespace bwprof
