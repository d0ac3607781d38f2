// Theoretical occupancy for NVIDIA sm_70..sm_90 and AMD CDNA2/CDNA3/RDNA3 (see occupancy.hpp).
//
// Sources of the table (docs/occupancy.md has the full list and the reasoning):
//  [CUDA-CC]  CUDA C++ Programming Guide, "Compute Capabilities": the table "Technical
//             Specifications per Compute Capability" (warps, blocks, registers and shared memory
//             per SM, shared memory per block) and the per-architecture "Shared Memory" sections
//             (the carve-out sizes an SM can be configured to).
//  [CUDA-OCC] cuda_occupancy.h, shipped in every CUDA toolkit's include/: the rules the runtime's
//             cudaOccupancyMaxActiveBlocksPerMultiprocessor follows: registers rounded to 256
//             per warp and allocated per SM sub-partition (4 per SM), the per-block register
//             check over warps rounded up to 4, shared memory rounded to 256 B (7.x) / 128 B
//             (8.x, 9.x) after adding the driver's reserved 1 KB per block (8.0+; the
//             reservedSharedMemPerBlock device property), and the default carve-out preference
//             meaning "the whole shared memory of the SM".
//  [LLVM]     LLVM AMDGPU backend, lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp (IsaInfo):
//             getMaxWavesPerEU (8 on gfx90a/gfx94x, 16 on gfx10.3+), getVGPRAllocGranule and
//             getTotalNumVGPRs (gfx90a/gfx94x: granule 8 of 512 unified arch+acc VGPRs; gfx1100/1101
//             "1.5x VGPRs": 24 of 1536 in wave32, 12 of 768 in wave64; gfx1102: 16 of 1024 / 8 of
//             512), getEUsPerCU (4 SIMDs per CU, or per WGP in WGP mode; 2 in CU mode) and
//             getMaxWorkGroupsPerCU (a multi-wave workgroup takes one of 16 barriers per CU, 32
//             per WGP in WGP mode; one-wave workgroups need none).
//  [MESA]     Mesa src/amd/common/ac_gpu_info.c: LDS per workgroup processor 128 KB on gfx10+
//             (64 KB per CU before), and the LDS allocation granularity the hardware aligns to:
//             128 dwords (512 B) on gfx7..gfx10.1, 256 dwords (1 KB) on gfx10.3+.
//  [AMD-ISA]  AMD "CDNA2 / CDNA3 Instruction Set Architecture" and "RDNA3 Instruction Set
//             Architecture" reference guides: 64 KB LDS per CU (max 64 KB per workgroup), 4 SIMDs
//             per CU (CDNA), WGP = 2 CUs of 2 SIMD32 each sharing 128 KB LDS (RDNA3).
#include "bwprof/occupancy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

constexpr std::int64_t kKiB = 1024;

std::vector<std::int64_t> kib(std::initializer_list<int> sizes) {
  std::vector<std::int64_t> out;
  for (int s : sizes) out.push_back(s * kKiB);
  return out;
}

// NVIDIA: what every sm_70..sm_90 shares [CUDA-CC, CUDA-OCC].
ArchLimits nvidia(const char* name, const char* family, int cc_major, int max_warps, int max_blocks,
                  std::vector<std::int64_t> carveouts, std::int64_t max_smem_per_block) {
  ArchLimits a;
  a.name = name;
  a.family = family;
  a.vendor = GpuVendor::kNvidia;
  a.unit = "SM";
  a.wave_size = 32;
  a.max_threads_per_block = 1024;
  a.max_warps = max_warps;
  a.max_blocks = max_blocks;
  a.register_partitions = 4;           // four SM sub-partitions, each with a quarter of the 64K
  a.registers_per_partition = 16384;   // 32-bit register file
  a.register_alloc_unit = 256;         // registers per warp
  a.registers_counted_per_warp = true;
  a.max_registers_per_thread = 255;
  a.max_registers_per_block = 65536;
  a.carveouts = std::move(carveouts);
  a.shared_mem_per_unit = a.carveouts.back();
  const bool ampere_or_later = cc_major >= 8;
  a.shared_mem_alloc_unit = ampere_or_later ? 128 : 256;
  a.shared_mem_reserved_per_block = ampere_or_later ? 1 * kKiB : 0;
  a.max_shared_mem_per_block = max_smem_per_block;
  a.source = "CUDA C++ Programming Guide (compute capabilities table, shared memory sections); cuda_occupancy.h";
  return a;
}

// AMD CDNA2/CDNA3: one CU of 4 SIMD64s, 8 wave slots each, 512 unified VGPRs per lane, 64 KB LDS.
ArchLimits cdna(const char* name, const char* family) {
  ArchLimits a;
  a.name = name;
  a.family = family;
  a.vendor = GpuVendor::kAmd;
  a.unit = "CU";
  a.wave_size = 64;
  a.max_threads_per_block = 1024;
  a.max_warps = 4 * 8;
  a.max_blocks = 16;
  a.single_wave_blocks_skip_block_limit = true;
  a.register_partitions = 4;
  a.registers_per_partition = 512;  // arch VGPRs and AGPRs share one file on gfx90a and later
  a.register_alloc_unit = 8;
  a.registers_counted_per_warp = false;
  a.max_registers_per_thread = 512;  // up to 256 arch + 256 acc
  a.max_registers_per_block = 0;
  a.shared_mem_per_unit = 64 * kKiB;
  a.shared_mem_alloc_unit = 512;
  a.shared_mem_reserved_per_block = 0;
  a.max_shared_mem_per_block = 64 * kKiB;
  a.source = "LLVM AMDGPUBaseInfo.cpp (IsaInfo); Mesa ac_gpu_info.c; AMD CDNA2/CDNA3 ISA guides";
  return a;
}

// AMD RDNA3 in WGP mode (the compiler's default): 4 SIMD32s sharing 128 KB LDS, 16 wave slots
// per SIMD. `vgprs` is the wave32 VGPR budget per lane: 1536 with the "1.5x VGPRs" of
// gfx1100/gfx1101, 1024 on gfx1102; wave64 has half the budget and half the granule.
ArchLimits rdna3(const char* name, int vgprs, int granule) {
  ArchLimits a;
  a.name = name;
  a.family = "RDNA3";
  a.vendor = GpuVendor::kAmd;
  a.unit = "WGP";
  a.wave_size = 32;
  a.max_threads_per_block = 1024;
  a.max_warps = 4 * 16;
  a.max_blocks = 32;
  a.single_wave_blocks_skip_block_limit = true;
  a.register_partitions = 4;
  a.registers_per_partition = vgprs;
  a.register_alloc_unit = granule;
  a.registers_counted_per_warp = false;
  a.max_registers_per_thread = 256;
  a.max_registers_per_block = 0;
  a.shared_mem_per_unit = 128 * kKiB;
  a.shared_mem_alloc_unit = 1 * kKiB;
  a.shared_mem_reserved_per_block = 0;
  a.max_shared_mem_per_block = 64 * kKiB;
  a.has_wave64_option = true;
  a.wave64_registers_per_partition = vgprs / 2;
  a.wave64_register_alloc_unit = granule / 2;
  a.has_cu_mode = true;
  a.source = "LLVM AMDGPUBaseInfo.cpp (IsaInfo); Mesa ac_gpu_info.c; AMD RDNA3 ISA guide";
  return a;
}

std::vector<ArchLimits> build_table() {
  const auto volta = kib({0, 8, 16, 32, 64, 96});
  const auto turing = kib({32, 64});
  const auto ga100 = kib({0, 8, 16, 32, 64, 100, 132, 164});
  const auto ga10x = kib({0, 8, 16, 32, 64, 100});
  const auto hopper = kib({0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
  return {
      nvidia("sm_70", "Volta", 7, 64, 32, volta, 96 * kKiB),
      nvidia("sm_75", "Turing", 7, 32, 16, turing, 64 * kKiB),
      nvidia("sm_80", "Ampere", 8, 64, 32, ga100, 163 * kKiB),
      nvidia("sm_86", "Ampere", 8, 48, 16, ga10x, 99 * kKiB),
      nvidia("sm_87", "Ampere", 8, 48, 16, ga100, 163 * kKiB),
      nvidia("sm_89", "Ada", 8, 48, 24, ga10x, 99 * kKiB),
      nvidia("sm_90", "Hopper", 9, 64, 32, hopper, 227 * kKiB),
      cdna("gfx90a", "CDNA2"),
      cdna("gfx940", "CDNA3"),
      cdna("gfx941", "CDNA3"),
      cdna("gfx942", "CDNA3"),
      rdna3("gfx1100", 1536, 24),
      rdna3("gfx1101", 1536, 24),
      rdna3("gfx1102", 1024, 16),
  };
}

std::string normalize_arch(const std::string& raw) {
  std::string s;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = s.find(':');  // HIP's gcnArchName carries target features: gfx90a:sramecc+:xnack-
  if (colon != std::string::npos) s = s.substr(0, colon);
  if (s.rfind("compute_", 0) == 0) s = "sm_" + s.substr(8);
  if (s.rfind("sm", 0) == 0 && s.rfind("sm_", 0) != 0) s = "sm_" + s.substr(2);
  // sm_90a / sm_100f: the suffix selects instructions, not resources.
  if (s.rfind("sm_", 0) == 0 && s.size() > 3 && (s.back() == 'a' || s.back() == 'f')) s.pop_back();
  return s;
}

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
  static const std::vector<ArchLimits> table = build_table();
  return table;
}

std::vector<std::string> occupancy_arch_names() {
  std::vector<std::string> out;
  for (auto& a : arch_table()) out.push_back(a.name);
  return out;
}

const ArchLimits& arch_limits(const std::string& arch) {
  const std::string key = normalize_arch(arch);
  for (auto& a : arch_table())
    if (a.name == key) return a;
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
