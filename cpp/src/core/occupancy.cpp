// Theoretical occupancy (see occupancy.hpp) over the limits in the architecture table (arch.cpp).
#include "bwprof/occupancy.hpp"

#include <algorithm>
#include <cstdio>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

std::int64_t round_up(std::int64_t v, std::int64_t unit) { return unit <= 0 ? v : (v + unit - 1) / unit * unit; }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string blocks_text(int n) {
  if (n == Occupancy::kUnlimited) return "no limit";
  return std::to_string(n) + (n == 1 ? " block" : " blocks");
}

std::string pct_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%%", v);
  return buf;
}

// The plain-word name of a limit, for "limited by ...".
std::string limit_word(const std::string& name) {
  if (name == "registers") return "registers";
  if (name == "shared_memory") return "shared memory";
  if (name == "vgprs") return "VGPRs";
  if (name == "lds") return "LDS";
  std::string w = name;
  std::replace(w.begin(), w.end(), '_', ' ');
  return w;
}

}  // namespace

const std::vector<ArchLimits>& arch_table() {
  static const std::vector<ArchLimits> table = [] {
    std::vector<ArchLimits> out;
    for (auto& a : architectures())
      if (a.has_limits) out.push_back(a.limits);
    return out;
  }();
  return table;
}

std::vector<std::string> occupancy_arch_names() {
  std::vector<std::string> out;
  for (auto& a : arch_table()) out.push_back(a.name);
  return out;
}

const ArchLimits& arch_limits(const std::string& arch) {
  const Arch* a = find_arch(arch);
  if (a && a->has_limits) return a->limits;
  throw InvalidArgument("arch: unknown architecture '" + arch + "'; known: " + join(occupancy_arch_names(), ", "));
}

Occupancy compute_occupancy(const ArchLimits& base, std::int64_t threads_per_block, std::int64_t registers_per_thread,
                            std::int64_t shared_mem_per_block, const OccupancyOptions& options) {
  // The options select a variant of the architecture's limits.
  ArchLimits a = base;
  if (options.wave64 && a.vendor == GpuVendor::kNvidia)
    throw InvalidArgument("wave64: NVIDIA warps are always 32 threads; wave64 applies to AMD RDNA archs (" + a.name + ")");
  if (options.wave64 && a.has_wave64_option) {
    a.wave_size = 64;
    a.registers_per_partition = a.wave64_registers_per_partition;
    a.register_alloc_unit = a.wave64_register_alloc_unit;
  }
  if (options.cu_mode) {
    if (!a.has_cu_mode) throw InvalidArgument("cu_mode: applies to AMD RDNA archs only, not " + a.name);
    // A CU is half a WGP: 2 SIMDs, their wave slots, half the LDS, 16 barriers [LLVM, MESA].
    a.unit = "CU";
    a.register_partitions /= 2;
    a.max_warps /= 2;
    a.max_blocks = 16;
    a.shared_mem_per_unit /= 2;
  }

  if (threads_per_block < 1 || threads_per_block > a.max_threads_per_block)
    throw InvalidArgument("threads_per_block: must be 1.." + std::to_string(a.max_threads_per_block) + " on " + a.name +
                          ", got " + std::to_string(threads_per_block));
  if (registers_per_thread < 0 || registers_per_thread > a.max_registers_per_thread)
    throw InvalidArgument("registers_per_thread: must be 0.." + std::to_string(a.max_registers_per_thread) + " on " +
                          a.name + ", got " + std::to_string(registers_per_thread));
  if (shared_mem_per_block < 0 || shared_mem_per_block > a.max_shared_mem_per_block)
    throw InvalidArgument("shared_mem_per_block: must be 0.." + std::to_string(a.max_shared_mem_per_block) +
                          " bytes on " + a.name + ", got " + std::to_string(shared_mem_per_block));

  const bool amd = a.vendor == GpuVendor::kAmd;
  Occupancy o;
  o.arch = a.name;
  o.family = a.family;
  o.vendor = amd ? "amd" : "nvidia";
  o.unit = a.unit;
  o.wave_size = a.wave_size;
  o.threads_per_block = threads_per_block;
  o.registers_per_thread = registers_per_thread;
  o.shared_mem_per_block = shared_mem_per_block;
  const int wpb = static_cast<int>((threads_per_block + a.wave_size - 1) / a.wave_size);
  o.warps_per_block = wpb;
  o.max_warps = a.max_warps;

  // Warp (wave) slots.
  const int warp_slot_blocks = a.max_warps / wpb;

  // Block (workgroup) slots.
  const int block_slot_blocks = (a.single_wave_blocks_skip_block_limit && wpb == 1) ? Occupancy::kUnlimited : a.max_blocks;

  // Registers: a warp's allocation is rounded to the unit; whole warps fit per partition.
  // AMD allocates at least one granule per wave [LLVM: getNumWavesPerEUWithNumVGPRs].
  std::int64_t per_warp = a.registers_counted_per_warp ? registers_per_thread * a.wave_size
                                                       : std::max<std::int64_t>(1, registers_per_thread);
  per_warp = round_up(per_warp, a.register_alloc_unit);
  o.registers_allocated_per_warp = static_cast<int>(per_warp);
  int register_blocks;
  if (per_warp == 0) {
    register_blocks = Occupancy::kUnlimited;
  } else if (a.max_registers_per_block > 0 &&
             per_warp * round_up(wpb, a.register_partitions) > a.max_registers_per_block) {
    // The hardware checks a block's registers as if its warps were spread over all 4
    // sub-partitions, so warps are rounded up to a multiple of 4 here [CUDA-OCC].
    register_blocks = 0;
    o.note = "a block needs " + std::to_string(per_warp * round_up(wpb, a.register_partitions)) +
             " registers (" + std::to_string(per_warp) + " per warp x " +
             std::to_string(round_up(wpb, a.register_partitions)) + " warps, rounded up to a multiple of " +
             std::to_string(a.register_partitions) + "), more than the " + std::to_string(a.max_registers_per_block) +
             " a block may use";
  } else {
    const std::int64_t warps_per_partition = a.registers_per_partition / per_warp;
    register_blocks = static_cast<int>(warps_per_partition * a.register_partitions / wpb);
  }

  // Shared memory / LDS: the block's bytes plus the driver's reserve, rounded to the unit.
  std::int64_t smem = shared_mem_per_block + a.shared_mem_reserved_per_block;
  smem = round_up(smem, a.shared_mem_alloc_unit);
  o.shared_mem_allocated_per_block = smem;
  const int smem_blocks = smem == 0 ? Occupancy::kUnlimited : static_cast<int>(a.shared_mem_per_unit / smem);

  if (amd) {
    o.limits = {{"lds", "LDS-limited", smem_blocks},
                {"vgprs", "VGPR-limited", register_blocks},
                {"wave_slots", "wave slots", warp_slot_blocks},
                {"workgroup_slots", "workgroup slots", block_slot_blocks}};
  } else {
    o.limits = {{"shared_memory", "shared-memory-limited", smem_blocks},
                {"registers", "register-limited", register_blocks},
                {"warp_slots", "warp slots", warp_slot_blocks},
                {"block_slots", "block slots", block_slot_blocks}};
  }

  int active = Occupancy::kUnlimited;
  for (auto& l : o.limits) active = std::min(active, l.blocks);
  o.active_blocks = active;  // warp slots always limit, so this is finite
  o.active_warps = active * wpb;
  o.occupancy_pct = 100.0 * o.active_warps / o.max_warps;
  // Ties: the slots first. When a slot limit binds, spending fewer registers or less shared
  // memory cannot raise occupancy, which is the first thing a reader wants to know.
  for (int idx : {2, 3, 1, 0})
    if (o.limits[idx].blocks == active) o.limiters.push_back(o.limits[idx].name);
  o.limiter = o.limiters.front();

  // The carve-out: the runtime, left at its default preference, counts blocks against the SM's
  // whole shared memory [CUDA-OCC]; the smallest configuration holding that many blocks gives
  // the same count and leaves the rest to L1. Reported for information; the count does not
  // depend on it.
  o.shared_mem_carveout = a.shared_mem_per_unit;
  if (!a.carveouts.empty()) {
    const std::int64_t needed = static_cast<std::int64_t>(active) * smem;
    for (auto c : a.carveouts)
      if (c >= needed) {
        o.shared_mem_carveout = c;
        break;
      }
  }
  return o;
}

Occupancy compute_occupancy(const std::string& arch, std::int64_t threads_per_block, std::int64_t registers_per_thread,
                            std::int64_t shared_mem_per_block, const OccupancyOptions& options) {
  return compute_occupancy(arch_limits(arch), threads_per_block, registers_per_thread, shared_mem_per_block, options);
}

std::string limits_text(const Occupancy& o) {
  std::vector<std::string> parts;
  for (auto& l : o.limits) {
    std::string s = l.label + ": " + blocks_text(l.blocks);
    if (std::find(o.limiters.begin(), o.limiters.end(), l.name) != o.limiters.end()) s += " <- the limit";
    parts.push_back(s);
  }
  return join(parts, "; ");
}

std::string summary_text(const Occupancy& o) {
  const bool amd = o.vendor == "amd";
  std::string head = o.arch + " (" + o.family;
  if (amd) head += ", wave" + std::to_string(o.wave_size);
  if (o.unit == "WGP") head += ", WGP mode";
  if (amd && o.unit == "CU" && o.family == "RDNA3") head += ", CU mode";
  head += ")";
  const std::string warp = amd ? "waves" : "warps";
  if (o.active_blocks == 0) return head + ": no block fits on one " + o.unit + ": " + o.note;
  std::vector<std::string> words;
  for (auto& n : o.limiters) words.push_back(limit_word(n));
  return head + ": " + blocks_text(o.active_blocks) + " per " + o.unit + ", " + std::to_string(o.active_warps) +
         " of " + std::to_string(o.max_warps) + " " + warp + ", " + pct_text(o.occupancy_pct) +
         " occupancy, limited by " + join(words, " and ");
}

}  // namespace bwprof
