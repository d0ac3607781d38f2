// Theoretical occupancy: how many blocks (workgroups) of one kernel fit on an SM, CU or WGP at
// once, and which resource stops one more from fitting. The model, the tables and their sources
// are in docs/occupancy.md; the numbers themselves live in the architecture table
// (bwprof/arch.hpp, cpp/src/core/arch.cpp).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bwprof/arch.hpp"

namespace bwprof {

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
