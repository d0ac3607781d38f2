// The STREAM kernels: copy, scale, add, triad and dot over arrays of n elements, and the clean read
// (the sum of one array). Their CPU and GPU variants are the memory ceilings the peaks policy
// measures (the best is the device's achievable bandwidth); the read and the copy also draw the
// size curve's two lines.
#include <cstdlib>
#include <map>
#include <string>

#include "bwprof/environment.hpp"
#include "bwprof/registry.hpp"
#include "stream/stream.hpp"

namespace bwprof {

namespace {

// The peaks run: 32 MB FP32 arrays on the CPU (evicted every run); on a GPU 1 GiB FP32 arrays
// where memory allows (three of them), else a sixteenth of memory each, or BWPROF_PEAK_ARRAY_BYTES
// (smaller arrays, e.g. for a compute-sanitizer run where every access is checked).
std::map<std::string, std::string> peak_params(const DeviceInfo& info) {
  if (info.kind == "cpu") return {{"n", std::to_string(8 << 20)}};
  std::int64_t n = 1ll << 28;
  while (n > (1 << 20) && 3.0 * 4 * n > info.memory_bytes / 4) n >>= 1;
  if (const auto bytes = env::peak_array_bytes()) n = *bytes / 4;
  return {{"n", std::to_string(n)}};
}

// `name` is "stream_<op>": the CPU and GPU kernels take their operation from it (stream_op()).
KernelFamily stream_kernel(const char* name, int reads, int writes, int flops_per_elem, const char* doc,
                           int arrays = 3) {
  KernelFamily k;
  k.name = name;
  k.family = "stream";
  k.doc = doc;
  k.order = 10;
  k.params = {int_param("n", "16777216", 1, kMaxElements, "elements per array")};
  k.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  k.traffic = [=](const Problem& p) {
    double n = static_cast<double>(checked_elements(p, {"n"}));
    return Traffic{reads * n * elem_bytes(p), writes * n * elem_bytes(p), flops_per_elem * n};
  };
  // Arrays a, b and c (the read: a alone); on the GPU the dot's partial sums, a float for each of
  // up to 8 blocks an SM (64 KiB covers 2048 SMs), or the read's, a float for each 2 KiB or more.
  k.footprint = [arrays](const Problem& p, const std::string& kind) {
    const double n = static_cast<double>(p.i("n")), e = elem_bytes(p);
    return host_and_device(arrays * n * e, kind, arrays == 1 ? 65536.0 + n * e / 512 : 65536.0);
  };
  k.variants.push_back(Variant{"cpu", "cpu", make_stream_cpu}.measures(Ceiling::kMemory));
#ifdef BWPROF_WITH_GPU
  k.variants.push_back(Variant{"gpu", "gpu", make_stream_gpu}.measures(Ceiling::kMemory));
#endif
  k.ceiling_params = peak_params;
  k.suite = {{"stream n={n:bin}", {{"n", 1 << 24}}, {{"n", 1 << 20}}}};
  return k;
}

}  // namespace

void register_family_stream(Registry& r) {
  // The clean read and the copy measure the size-aware ceiling: what a kernel moving B bytes
  // reaches, from 4 KB up, one line for each access pattern (bwprof/size_curve.hpp).
  KernelFamily copy = stream_kernel("stream_copy", 1, 1, 0, "c[i] = a[i]");
  copy.ceiling_size = "n";
  r.add_family(std::move(copy));
  r.add_family(stream_kernel("stream_scale", 1, 1, 1, "b[i] = s * c[i]"));
  r.add_family(stream_kernel("stream_add", 2, 1, 1, "c[i] = a[i] + b[i]"));
  r.add_family(stream_kernel("stream_triad", 2, 1, 2, "a[i] = b[i] + s * c[i]"));
  // The dot product's single output is negligible; it is still one written element.
  KernelFamily k = stream_kernel("stream_dot", 2, 0, 2, "sum(a[i] * b[i]) with FP32 accumulation");
  auto t = k.traffic;
  k.traffic = [t](const Problem& p) { Traffic x = t(p); x.bytes_written = 4; return x; };
  r.add_family(std::move(k));
  // A read with nothing else in its way: on the GPU every thread's loads at once, one partial sum
  // a block, no second pass (the dot, whose last block adds the others' partials after a grid-wide
  // counter, took over 2 us longer than a copy of the same bytes at 1 MB on the H100). Its output
  // is one written element (the GPU's per-block partial sums are at most 0.1 % of the bytes).
  KernelFamily read = stream_kernel("stream_read", 1, 0, 1, "sum(a[i]) with FP32 accumulation", 1);
  auto rt = read.traffic;
  read.traffic = [rt](const Problem& p) { Traffic x = rt(p); x.bytes_written = 4; return x; };
  read.ceiling_size = "n";
  r.add_family(std::move(read));
}

}  // namespace bwprof
