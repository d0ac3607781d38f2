// Occupancy against examples worked by hand from the published rules (CUDA occupancy calculator,
// LLVM/AMD docs) and AMD's own published measurements; each case shows its arithmetic.
#include <algorithm>
#include "bwprof/occupancy.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "bwprof/error.hpp"
#include "message_of.hpp"

using namespace bwprof;

namespace {

int limit(const Occupancy& o, const std::string& name) {
  for (auto& l : o.limits)
    if (l.name == name) return l.blocks;
  ADD_FAILURE() << "no limit named " << name;
  return -1;
}

}  // namespace

// ---- NVIDIA ---------------------------------------------------------------------------------

TEST(OccupancyNvidia, Sm90RegistersAndSharedMemoryTie) {
  // 256 threads = 8 warps. Registers: 64 * 32 = 2048 per warp; 16384 per sub-partition / 2048 =
  // 8 warps, * 4 = 32 warps = 4 blocks. Shared memory: 49152 + 1024 reserved = 50176 (a
  // multiple of 128); 233472 (228 KB) / 50176 = 4.65 -> 4. Warp slots 64 / 8 = 8; blocks 32.
  Occupancy o = compute_occupancy("sm_90", 256, 64, 49152);
  EXPECT_EQ(o.warps_per_block, 8);
  EXPECT_EQ(limit(o, "registers"), 4);
  EXPECT_EQ(limit(o, "shared_memory"), 4);
  EXPECT_EQ(limit(o, "warp_slots"), 8);
  EXPECT_EQ(limit(o, "block_slots"), 32);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(o.active_warps, 32);
  EXPECT_EQ(o.max_warps, 64);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 50.0);
  EXPECT_EQ(o.limiters, (std::vector<std::string>{"registers", "shared_memory"}));
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_EQ(o.registers_allocated_per_warp, 2048);
  EXPECT_EQ(o.shared_mem_allocated_per_block, 50176);
  EXPECT_EQ(o.shared_mem_carveout, 196 * 1024);  // 4 * 50176 = 200704 = exactly 196 KB
}

TEST(OccupancyNvidia, Sm80FullOccupancyIsWarpSlotLimited) {
  // 128 threads = 4 warps, 32 registers: 1024 per warp, 16 warps per sub-partition = 64 warps =
  // 16 blocks; warp slots 64 / 4 = 16 too: a tie, reported as the slots.
  Occupancy o = compute_occupancy("sm_80", 128, 32, 0);
  EXPECT_EQ(o.active_blocks, 16);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  EXPECT_EQ(o.limiter, "warp_slots");
  EXPECT_EQ(o.limiters, (std::vector<std::string>{"warp_slots", "registers"}));
  EXPECT_EQ(limit(o, "shared_memory"), 164);  // the reserved 1 KB alone: 167936 / 1024
  EXPECT_EQ(o.shared_mem_carveout, 16 * 1024);  // 16 blocks * 1 KB
}

TEST(OccupancyNvidia, RegistersAreAllocatedPerSubPartition) {
  // 96 registers: 3072 per warp. Per sub-partition 16384 / 3072 = 5.33 -> 5, so 20 warps per SM;
  // counting the SM's 65536 as one pool would give 21. One-warp blocks: 20 blocks = 20/64 warps.
  Occupancy o = compute_occupancy("sm_80", 32, 96, 0);
  EXPECT_EQ(limit(o, "registers"), 20);
  EXPECT_EQ(o.active_blocks, 20);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 31.25);
  EXPECT_EQ(o.limiter, "registers");
}

TEST(OccupancyNvidia, RegisterGranularityRoundsPerWarp) {
  // 37 registers * 32 = 1184 -> 1280 per warp (a multiple of 256); 16384 / 1280 = 12.8 -> 12
  // warps per sub-partition, 48 per SM = 6 blocks of 8 warps.
  Occupancy o = compute_occupancy("sm_90", 256, 37, 0);
  EXPECT_EQ(o.registers_allocated_per_warp, 1280);
  EXPECT_EQ(limit(o, "registers"), 6);
  EXPECT_EQ(o.active_blocks, 6);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 75.0);
}

TEST(OccupancyNvidia, Sm86HasFortyEightWarps) {
  // 768 threads = 24 warps; 48 warp slots -> 2 blocks, all 48 warps: 100 %.
  Occupancy o = compute_occupancy("sm_86", 768, 32, 0);
  EXPECT_EQ(o.max_warps, 48);
  EXPECT_EQ(o.active_blocks, 2);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  EXPECT_EQ(o.limiter, "warp_slots");
}

TEST(OccupancyNvidia, Sm89BlockSlots) {
  // One-warp blocks with few registers: only the 24 block slots of sm_89 bind: 24 of 48 warps.
  Occupancy o = compute_occupancy("sm_89", 32, 16, 0);
  EXPECT_EQ(o.active_blocks, 24);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 50.0);
  EXPECT_EQ(o.limiter, "block_slots");
}

TEST(OccupancyNvidia, VoltaSharedMemoryGranularityIs256AndNoReserve) {
  // 40000 B -> 40192 (a multiple of 256), no reserved kilobyte before sm_80; 98304 / 40192 = 2.
  Occupancy o = compute_occupancy("sm_70", 64, 32, 40000);
  EXPECT_EQ(o.shared_mem_allocated_per_block, 40192);
  EXPECT_EQ(o.active_blocks, 2);
  EXPECT_EQ(o.limiter, "shared_memory");
  EXPECT_EQ(o.shared_mem_carveout, 96 * 1024);  // 2 * 40192 = 80384 > 64 KB
  // And with no shared memory at all, it does not limit.
  EXPECT_EQ(limit(compute_occupancy("sm_70", 64, 32, 0), "shared_memory"), Occupancy::kUnlimited);
}

TEST(OccupancyNvidia, TuringSmallestCarveoutIs32K) {
  Occupancy o = compute_occupancy("sm_75", 1024, 64, 0);
  // 1024 threads = 32 warps = every warp slot of sm_75; 64 registers: 2048 * 32 = 65536 fits.
  EXPECT_EQ(o.active_blocks, 1);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  EXPECT_EQ(o.shared_mem_carveout, 32 * 1024);
}

TEST(OccupancyNvidia, TooManyRegistersForOneBlockGivesZero) {
  // 65 registers: 2080 -> 2304 per warp; * 32 warps = 73728 > 65536: the launch cannot fit, and
  // the runtime's occupancy API answers 0 blocks.
  Occupancy o = compute_occupancy("sm_75", 1024, 65, 0);
  EXPECT_EQ(o.active_blocks, 0);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 0.0);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_NE(o.note.find("73728"), std::string::npos) << o.note;
  EXPECT_NE(summary_text(o).find("no block fits"), std::string::npos);
}

TEST(OccupancyNvidia, PerBlockRegisterCheckRoundsWarpsToFour) {
  // 80 registers = 2560 per warp. 768 threads = 24 warps: 61440 registers, and 16384 / 2560 = 6
  // warps per sub-partition hold exactly one block. 800 threads = 25 warps: 64000 would fit in
  // 65536, but the hardware checks 25 warps as 28 (a multiple of 4): 71680 does not, so 0.
  Occupancy fits = compute_occupancy("sm_90", 768, 80, 0);
  EXPECT_EQ(fits.active_blocks, 1);
  EXPECT_EQ(fits.limiter, "registers");
  Occupancy none = compute_occupancy("sm_90", 800, 80, 0);
  EXPECT_EQ(none.active_blocks, 0);
  EXPECT_EQ(none.limiter, "registers");
  EXPECT_NE(none.note.find("71680"), std::string::npos) << none.note;
}

TEST(OccupancyNvidia, Sm90LargestSharedMemoryBlock) {
  // 227 KB is the opt-in maximum per block; with the reserved 1 KB it fills all 228 KB.
  Occupancy o = compute_occupancy("sm_90", 128, 32, 227 * 1024);
  EXPECT_EQ(o.active_blocks, 1);
  EXPECT_EQ(o.shared_mem_carveout, 228 * 1024);
  EXPECT_THROW(compute_occupancy("sm_90", 128, 32, 227 * 1024 + 1), InvalidArgument);
}

TEST(OccupancyNvidia, ZeroRegistersDoNotLimit) {
  EXPECT_EQ(limit(compute_occupancy("sm_90", 128, 0, 0), "registers"), Occupancy::kUnlimited);
}

// ---- AMD ------------------------------------------------------------------------------------

TEST(OccupancyAmd, SeedRdna3FlashAttentionCase) {
  // The seed's RDNA3 kernel: 256 threads, 8 VGPRs, 1.5 KB LDS. In the default wave32 / WGP mode
  // a block is 8 waves; the WGP has 4 SIMDs * 16 wave slots = 64 -> 8 blocks, every slot: 100 %.
  // LDS: 1536 rounds to 2048 (1 KB granularity on gfx10.3+), 128 KB / 2 KB = 64 blocks (the
  // seed's 85 divided without the rounding). VGPRs: 8 -> granule 24, 1536 / 24 = 64 waves per
  // SIMD, 256 per WGP = 32 blocks (the seed's 16 used 512 per wave).
  Occupancy o = compute_occupancy("gfx1100", 256, 8, 1536);
  EXPECT_EQ(o.warps_per_block, 8);
  EXPECT_EQ(o.unit, "WGP");
  EXPECT_EQ(o.active_blocks, 8);
  EXPECT_EQ(o.active_warps, 64);
  EXPECT_EQ(o.max_warps, 64);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  EXPECT_EQ(o.limiter, "wave_slots");
  EXPECT_EQ(o.limiters, (std::vector<std::string>{"wave_slots"}));
  EXPECT_EQ(limit(o, "lds"), 64);
  EXPECT_EQ(limit(o, "vgprs"), 32);
  EXPECT_EQ(limit(o, "workgroup_slots"), 32);
  EXPECT_EQ(limits_text(o),
            "LDS-limited: 64 blocks; VGPR-limited: 32 blocks; wave slots: 8 blocks <- the limit; "
            "workgroup slots: 32 blocks");
  EXPECT_EQ(summary_text(o),
            "gfx1100 (RDNA3, wave32, WGP mode): 8 blocks per WGP, 64 of 64 waves, 100% occupancy, "
            "limited by wave slots");
}

TEST(OccupancyAmd, Rdna3Wave64HalvesTheVgprBudget) {
  // wave64: 4 waves per block, 64 slots -> 16 blocks. VGPRs: 8 -> granule 12 of 768 -> 64 per
  // SIMD, capped by nothing else here.
  OccupancyOptions w64;
  w64.wave64 = true;
  Occupancy o = compute_occupancy("gfx1100", 256, 8, 1536, w64);
  EXPECT_EQ(o.wave_size, 64);
  EXPECT_EQ(o.warps_per_block, 4);
  EXPECT_EQ(o.registers_allocated_per_warp, 12);
  EXPECT_EQ(limit(o, "vgprs"), 64);
  EXPECT_EQ(o.active_blocks, 16);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 100.0);
  // 128 VGPRs in wave64: 768 / 132 (rounded to 12) = 5 waves per SIMD, 20 per WGP = 5 blocks.
  Occupancy v = compute_occupancy("gfx1100", 256, 128, 0, w64);
  EXPECT_EQ(v.registers_allocated_per_warp, 132);
  EXPECT_EQ(v.active_blocks, 5);
  EXPECT_EQ(v.limiter, "vgprs");
  EXPECT_DOUBLE_EQ(v.occupancy_pct, 100.0 * 20 / 64);
}

TEST(OccupancyAmd, Gfx1102HasTheSmallerRegisterFile) {
  // gfx1102 (no 1.5x VGPRs): 1024 per lane, granule 16 in wave32. 100 VGPRs -> 112: 9 waves per
  // SIMD, 36 per WGP; 128-thread blocks (4 waves) -> 9 blocks = 36/64 waves.
  Occupancy o = compute_occupancy("gfx1102", 128, 100, 0);
  EXPECT_EQ(o.registers_allocated_per_warp, 112);
  EXPECT_EQ(o.active_blocks, 9);
  EXPECT_EQ(o.limiter, "vgprs");
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 56.25);
}

TEST(OccupancyAmd, Rdna3CuMode) {
  // CU mode: 2 SIMDs (32 wave slots), 64 KB LDS, 16 workgroups. The seed's kernel: 4 blocks.
  OccupancyOptions cu;
  cu.cu_mode = true;
  Occupancy o = compute_occupancy("gfx1100", 256, 8, 1536, cu);
  EXPECT_EQ(o.unit, "CU");
  EXPECT_EQ(o.max_warps, 32);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(limit(o, "lds"), 32);
  EXPECT_EQ(limit(o, "workgroup_slots"), 16);
}

TEST(OccupancyAmd, Cdna2PublishedVgprLimitedKernel) {
  // AMD's Omniperf "occupancy limiters" example on MI250 (gfx90a): vgprbound, 256 threads,
  // 124 VGPRs + 4 AGPRs = 128 of the unified 512: 4 waves per SIMD, 16 of 32 per CU; measured
  // wavefront occupancy 49.92 % of peak.
  Occupancy o = compute_occupancy("gfx90a", 256, 128, 0);
  EXPECT_EQ(o.warps_per_block, 4);
  EXPECT_EQ(o.active_blocks, 4);
  EXPECT_EQ(o.active_warps, 16);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 50.0);
  EXPECT_EQ(o.limiter, "vgprs");
}

TEST(OccupancyAmd, Cdna2PublishedLdsLimitedKernel) {
  // The same example's ldsbound: 256 threads, 96 VGPRs, 64 KiB LDS: one workgroup per CU,
  // 4 of 32 waves; measured 12.49 % of peak.
  Occupancy o = compute_occupancy("gfx90a", 256, 96, 64 * 1024);
  EXPECT_EQ(o.active_blocks, 1);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 12.5);
  EXPECT_EQ(o.limiter, "lds");
  EXPECT_EQ(limit(o, "vgprs"), 5);  // 512 / 96 = 5 waves per SIMD, 20 per CU, 5 blocks
}

TEST(OccupancyAmd, Cdna3Mi300x) {
  // gfx942: 512-thread blocks (8 waves), 72 VGPRs (+0 AGPRs): 512 / 72 = 7 waves per SIMD, 28 per
  // CU -> 3 blocks (24 waves, 75 %). 20000 B LDS -> 20480 (512 B granularity): 65536 / 20480 = 3
  // as well; the wave slots allow 4.
  Occupancy o = compute_occupancy("gfx942", 512, 72, 20000);
  EXPECT_EQ(limit(o, "vgprs"), 3);
  EXPECT_EQ(limit(o, "lds"), 3);
  EXPECT_EQ(limit(o, "wave_slots"), 4);
  EXPECT_EQ(limit(o, "workgroup_slots"), 16);
  EXPECT_EQ(o.active_blocks, 3);
  EXPECT_DOUBLE_EQ(o.occupancy_pct, 75.0);
  EXPECT_EQ(o.limiters, (std::vector<std::string>{"vgprs", "lds"}));
  EXPECT_EQ(o.shared_mem_allocated_per_block, 20480);
}

TEST(OccupancyAmd, CdnaWorkgroupLimitAndSingleWaveWorkgroups) {
  // 128 threads = 2 waves, few VGPRs: 32 slots / 2 = 16 = the 16 barriers: tie, slots first.
  Occupancy two = compute_occupancy("gfx942", 128, 16, 0);
  EXPECT_EQ(two.active_blocks, 16);
  EXPECT_EQ(two.limiters, (std::vector<std::string>{"wave_slots", "workgroup_slots"}));
  // One-wave workgroups take no barrier: 32 of them fit, limited by the wave slots alone.
  Occupancy one = compute_occupancy("gfx942", 64, 16, 0);
  EXPECT_EQ(one.active_blocks, 32);
  EXPECT_EQ(limit(one, "workgroup_slots"), Occupancy::kUnlimited);
  EXPECT_DOUBLE_EQ(one.occupancy_pct, 100.0);
}

TEST(OccupancyAmd, CdnaIsWave64AlreadyAndAcceptsUpTo512Vgprs) {
  OccupancyOptions w64;
  w64.wave64 = true;
  EXPECT_EQ(compute_occupancy("gfx90a", 256, 512, 0, w64).active_blocks, 1);  // 1 wave per SIMD
  EXPECT_THROW(compute_occupancy("gfx90a", 256, 513, 0), InvalidArgument);
}

// ---- names and errors ----------------------------------------------------------------------

TEST(OccupancyArch, NamesAndAliases) {
  auto names = occupancy_arch_names();
  EXPECT_EQ(names.size(), 16u);  // sm_70 to sm_120 (Blackwell's sm_100, sm_120), CDNA and RDNA 3
  EXPECT_NE(std::find(names.begin(), names.end(), "sm_100"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "sm_120"), names.end());
  EXPECT_EQ(arch_limits("sm90").name, "sm_90");
  EXPECT_EQ(arch_limits("SM_90A").name, "sm_90");
  EXPECT_EQ(arch_limits("compute_80").name, "sm_80");
  EXPECT_EQ(arch_limits("gfx90a:sramecc+:xnack-").name, "gfx90a");
  for (auto& a : arch_table()) {
    // The largest carve-out is the per-SM figure; one block can never ask for more than that.
    EXPECT_LE(a.max_shared_mem_per_block + a.shared_mem_reserved_per_block, a.shared_mem_per_unit) << a.name;
    EXPECT_FALSE(a.source.empty()) << a.name;
  }
}

TEST(OccupancyErrors, MessagesNameTheArgument) {
  EXPECT_NE(message_of<InvalidArgument>([] { compute_occupancy("sm_61", 128, 32, 0); }).find("arch: unknown architecture 'sm_61'"),
            std::string::npos);
  const std::string unknown = message_of<InvalidArgument>([] { compute_occupancy("nope", 128, 32, 0); });
  EXPECT_NE(unknown.find("sm_70"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("gfx1102"), std::string::npos) << unknown;
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("sm_90", 0, 32, 0); }).rfind("threads_per_block:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("sm_90", 1025, 32, 0); }).rfind("threads_per_block:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("sm_90", 128, 256, 0); }).rfind("registers_per_thread:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("sm_90", 128, -1, 0); }).rfind("registers_per_thread:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("gfx1100", 128, 257, 0); }).rfind("registers_per_thread:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("sm_86", 128, 32, 99 * 1024 + 1); }).rfind("shared_mem_per_block:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("gfx942", 128, 32, -5); }).rfind("shared_mem_per_block:", 0), 0u);
  EXPECT_EQ(message_of<InvalidArgument>([] { compute_occupancy("gfx1100", 128, 32, 64 * 1024 + 1); }).rfind("shared_mem_per_block:", 0), 0u);
  OccupancyOptions w64;
  w64.wave64 = true;
  EXPECT_EQ(message_of<InvalidArgument>([&] { compute_occupancy("sm_90", 128, 32, 0, w64); }).rfind("wave64:", 0), 0u);
  OccupancyOptions cu;
  cu.cu_mode = true;
  EXPECT_EQ(message_of<InvalidArgument>([&] { compute_occupancy("gfx942", 128, 32, 0, cu); }).rfind("cu_mode:", 0), 0u);
}
