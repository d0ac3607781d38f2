// Theoretical occupancy: how many blocks (workgroups) of one kernel fit on an SM, CU or WGP at
// once, and which resource stops one more from fitting. The model, the tables and their sources
// are in docs/occupancy.md; the numbers themselves live in cpp/src/core/occupancy.cpp.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace bwprof {

enum class GpuVendor { kNvidia, kAmd };

// The per-SM (NVIDIA) or per-CU / per-WGP (AMD) resources of one architecture, as the hardware
// hands them to resident blocks. Register and shared-memory figures follow each vendor's own
// allocation rules: see the field comments.
struct ArchLimits {
  std::string name;     // "sm_90", "gfx942"
  std::string family;   // "Hopper", "CDNA3", "RDNA3"
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string unit;     // what one occupancy figure is for: "SM", "CU" or "WGP"
  int wave_size = 32;   // threads per warp / wavefront
  int max_threads_per_block = 1024;
  int max_warps = 0;    // resident warps (waves) per unit: warp slots
  int max_blocks = 0;   // resident blocks (workgroups) per unit: block slots
  // AMD: a one-wave workgroup needs no barrier, so the workgroup limit does not apply to it.
  bool single_wave_blocks_skip_block_limit = false;

  // Registers. Allocation happens per partition (NVIDIA: SM sub-partition; AMD: SIMD), so the
  // warps that fit are partitions * floor(registers_per_partition / allocated-per-warp).
  int register_partitions = 4;
  // NVIDIA: 32-bit registers per sub-partition; AMD: VGPRs per lane of one SIMD.
  int registers_per_partition = 0;
  // NVIDIA: a warp's registers (per thread * 32) are rounded up to this many; AMD: a wave's
  // VGPRs per lane are rounded up to this granule.
  int register_alloc_unit = 0;
  bool registers_counted_per_warp = true;  // NVIDIA true (regs * warp size), AMD false (per lane)
  int max_registers_per_thread = 255;
  int max_registers_per_block = 0;         // NVIDIA 65536; 0: no such limit (AMD)

  // Shared memory (NVIDIA) / LDS (AMD), bytes.
  std::int64_t shared_mem_per_unit = 0;    // the largest carve-out (NVIDIA), LDS per CU/WGP (AMD)
  std::vector<std::int64_t> carveouts;     // NVIDIA's selectable shared-memory sizes; empty on AMD
  std::int64_t shared_mem_alloc_unit = 0;  // a block's use is rounded up to this
  std::int64_t shared_mem_reserved_per_block = 0;  // the driver's own 1 KB per block on sm_80+
  std::int64_t max_shared_mem_per_block = 0;       // what one block may ask for (opt-in maximum)

  // RDNA only: wave64 halves the VGPR budget and granule; CU mode halves the WGP.
  bool has_wave64_option = false;
  int wave64_registers_per_partition = 0;
  int wave64_register_alloc_unit = 0;
  bool has_cu_mode = false;
  std::string source;  // where these numbers come from
};

struct OccupancyOptions {
  bool wave64 = false;   // RDNA: compiled for wave64 (-mwavefrontsize64); CDNA is always wave64
  bool cu_mode = false;  // RDNA: compiled for CU mode (-mcumode) instead of the default WGP mode
};

// Blocks per unit that a resource alone allows; kUnlimited when it does not limit at all
// (no shared memory, no registers, a one-wave AMD workgroup and the workgroup slots).
struct OccupancyLimit {
  std::string name;   // "registers", "shared_memory", "warp_slots", "block_slots" (NVIDIA);
                      // "vgprs", "lds", "wave_slots", "workgroup_slots" (AMD)
  std::string label;  // as printed: "VGPR-limited", "wave slots", ...
  int blocks = 0;
};

struct Occupancy {
  static constexpr int kUnlimited = std::numeric_limits<int>::max();

  std::string arch;
  std::string family;
  std::string vendor;  // "nvidia", "amd"
  std::string unit;    // "SM", "CU", "WGP"
  int wave_size = 0;
  std::int64_t threads_per_block = 0;
  std::int64_t registers_per_thread = 0;
  std::int64_t shared_mem_per_block = 0;

  int warps_per_block = 0;
  int active_blocks = 0;   // per unit
  int active_warps = 0;    // per unit
  int max_warps = 0;       // per unit
  double occupancy_pct = 0;
  std::string limiter;                 // the first of `limiters` (order: slots, then resources)
  std::vector<std::string> limiters;   // every limit that equals active_blocks
  std::vector<OccupancyLimit> limits;  // in print order: shared memory, registers, warp, block

  int registers_allocated_per_warp = 0;       // NVIDIA: per warp; AMD: VGPRs per lane of a wave
  std::int64_t shared_mem_allocated_per_block = 0;  // incl. the reserved part and rounding
  std::int64_t shared_mem_carveout = 0;       // NVIDIA: smallest carve-out that keeps active_blocks
  std::string note;                           // why nothing fits, if so
};

// Every architecture in the table, in table order.
const std::vector<ArchLimits>& arch_table();
std::vector<std::string> occupancy_arch_names();

// The limits of one architecture. Accepts "sm_90", "sm90", "sm_90a", "gfx942",
// "gfx90a:sramecc+:xnack-" (HIP's gcnArchName); throws InvalidArgument listing the known ones.
const ArchLimits& arch_limits(const std::string& arch);

// Theoretical occupancy of a block of threads_per_block threads using registers_per_thread
// registers (AMD: VGPRs, arch + acc on CDNA) and shared_mem_per_block bytes (static + dynamic).
// Throws InvalidArgument naming the argument for values out of range.
Occupancy compute_occupancy(const ArchLimits& arch, std::int64_t threads_per_block,
                            std::int64_t registers_per_thread, std::int64_t shared_mem_per_block,
                            const OccupancyOptions& options = {});
Occupancy compute_occupancy(const std::string& arch, std::int64_t threads_per_block,
                            std::int64_t registers_per_thread, std::int64_t shared_mem_per_block,
                            const OccupancyOptions& options = {});

// "LDS-limited: 64 blocks; VGPR-limited: 32 blocks; wave slots: 8 blocks <- the limit; ..."
std::string limits_text(const Occupancy& o);
// "gfx1100 (RDNA3, wave32, WGP): 8 blocks per WGP, 64 of 64 waves, 100% occupancy, limited by wave slots"
std::string summary_text(const Occupancy& o);

}  // namespace bwprof
