// The cache-level roofs: l2_bandwidth, l1_bandwidth, shared_bandwidth (see cache_bw.hpp). The
// working sets come from the device: a quarter of the GPU's L2; on the CPU a quarter of each
// core's L2 or L1 per thread (two hardware threads may share a core).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "cache_bw/cache_bw.hpp"

namespace bwprof {

namespace {

std::int64_t round_down(double v, std::int64_t unit) {
  return std::max<std::int64_t>(unit, static_cast<std::int64_t>(v) / unit * unit);
}

CeilingRun run(const char* op, std::int64_t bytes, std::int64_t workers, const char* passes) {
  return CeilingRun{op, "fp32", {{"op", op}, {"bytes", std::to_string(bytes)}, {"workers", std::to_string(workers)},
                                 {"passes", passes}}};
}

KernelFamily cache_kernel(const char* name, const char* doc, int order, std::vector<std::string> ops) {
  KernelFamily k;
  k.name = name;
  k.family = "roofline";
  k.order = order;
  k.doc = doc;
  k.params = {choice_param("op", "read", ops, "read only, or read one half of the working set and write the other"),
              int_param("bytes", "1048576", 1, std::int64_t(1) << 34, "the working set in all (split among the workers)"),
              int_param("workers", "1", 1, 1 << 20, "GPU blocks of 256 threads, or CPU threads"),
              int_param("passes", "16", 1, std::int64_t(1) << 34, "times each worker goes over its part")};
  k.dtypes = {DType::kF32};
  k.validate = [](const Problem& p) {
    checked_elements(p, {"bytes", "passes"});
    const std::int64_t per = p.i("bytes") / p.i("workers");
    const std::int64_t unit = p.s("op") == "rw" ? 2 * kCacheChunk : kCacheChunk;
    if (per * p.i("workers") != p.i("bytes") || per % unit)
      throw InvalidArgument("bytes: must split into equal parts of a multiple of " + std::to_string(unit) +
                            " bytes per worker");
  };
  k.traffic = [](const Problem& p) {
    const double b = static_cast<double>(p.i("bytes")) * p.i("passes");
    return p.s("op") == "rw" ? Traffic{b / 2, b / 2, 0} : Traffic{b, 0, 0};
  };
  k.ceiling_working_set = [](const Problem& p) { return static_cast<double>(p.i("bytes")); };
  // The working set (kept on the host too) and each worker's sum; on the GPU a sum per thread.
  k.footprint = [](const Problem& p, const std::string& kind) {
    return host_and_device(p.i("bytes") + 8.0 * p.i("workers"), kind, 4.0 * kCacheThreads * p.i("workers"));
  };
  return k;
}

}  // namespace

void register_family_cache_bw(Registry& r) {
  KernelFamily l2 = cache_kernel("l2_bandwidth",
                                 "re-reads a working set the L2 holds and no L1 can (each block a different slice "
                                 "each pass): the L2's bandwidth",
                                 102, {"read", "rw"});
  l2.variants.push_back(Variant{"cpu", "cpu", make_cache_cpu}.measures(Ceiling::kL2));
#ifdef BWPROF_WITH_GPU
  l2.variants.push_back(Variant{"gpu", "gpu", make_l2_gpu}.measures(Ceiling::kL2));
#endif
  l2.ceiling_grow = "passes";
  l2.ceiling_runs = [](const DeviceInfo& info) {
    std::vector<CeilingRun> runs;
    if (info.kind == "cpu") {
      if (info.l2_cache_bytes <= 0) return runs;  // unknown: no L2 roof
      const std::int64_t per = round_down(info.l2_cache_bytes / 4, 2 * kCacheChunk);
      for (const char* op : {"read", "rw"}) runs.push_back(run(op, per * info.compute_units, info.compute_units, "16"));
      return runs;
    }
    const double l2 = info.cache_bytes > 0 ? info.cache_bytes : 4e6;
    const std::int64_t workers = 2 * std::max(1, info.compute_units);
    const std::int64_t per = round_down(l2 / 4 / workers, 2 * kCacheChunk);
    for (const char* op : {"read", "rw"}) runs.push_back(run(op, per * workers, workers, "1000"));
    return runs;
  };
  r.add_family(std::move(l2));

  KernelFamily l1 = cache_kernel("l1_bandwidth",
                                 "each block (CPU thread) re-reads a small region of its own that its SM's (core's) "
                                 "L1 holds: the L1's bandwidth",
                                 103, {"read"});
  l1.variants.push_back(Variant{"cpu", "cpu", make_cache_cpu}.measures(Ceiling::kL1));
#ifdef BWPROF_WITH_GPU
  l1.variants.push_back(Variant{"gpu", "gpu", make_l1_gpu}.measures(Ceiling::kL1));
#endif
  l1.ceiling_grow = "passes";
  l1.ceiling_runs = [](const DeviceInfo& info) {
    std::vector<CeilingRun> runs;
    if (info.kind == "cpu") {
      if (info.l1_cache_bytes <= 0) return runs;
      const std::int64_t per = round_down(info.l1_cache_bytes / 4, kCacheChunk);
      runs.push_back(run("read", per * info.compute_units, info.compute_units, "64"));
      return runs;
    }
    // NVIDIA: 4 blocks x 16 KB per SM (the L1 holds 128-256 KB); AMD: 2 x 4 KB per CU (16 KB vL1D).
    const bool amd = info.vendor == "amd";
    const std::int64_t blocks = (amd ? 2 : 4) * std::max(1, info.compute_units), per = amd ? 4096 : 16384;
    runs.push_back(run("read", per * blocks, blocks, "4096"));
    return runs;
  };
  r.add_family(std::move(l1));

  KernelFamily sh = cache_kernel("shared_bandwidth",
                                 "each block re-reads its own shared-memory (LDS) array, consecutive threads on "
                                 "consecutive 16 bytes (no bank conflicts): the shared memory's bandwidth",
                                 104, {"read", "rw"});
#ifdef BWPROF_WITH_GPU
  sh.variants.push_back(Variant{"gpu", "gpu", make_shared_gpu}.measures(Ceiling::kShared));
#endif
  sh.ceiling_runs = [](const DeviceInfo& info) {
    std::vector<CeilingRun> runs;
    if (info.kind == "cpu") return runs;  // no shared memory
    const std::int64_t blocks = (info.vendor == "amd" ? 2 : 4) * std::max(1, info.compute_units);
    for (const char* op : {"read", "rw"}) runs.push_back(run(op, 16384 * blocks, blocks, "4096"));
    return runs;
  };
  r.add_family(std::move(sh));
}

}  // namespace bwprof
