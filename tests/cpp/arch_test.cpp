// The one architecture table: rates and occupancy limits in one row, one name normalisation.
#include "bwprof/arch.hpp"

#include <gtest/gtest.h>

#include "bwprof/error.hpp"
#include "bwprof/occupancy.hpp"

using namespace bwprof;

TEST(Arch, SpellingsOfOneArchitectureFindTheSameRow) {
  const Arch* h = find_arch("sm_90");
  ASSERT_NE(h, nullptr);
  for (const char* s : {"sm_90a", "sm90", "SM_90", "compute_90", " sm_90 "}) EXPECT_EQ(find_arch(s), h) << s;
  EXPECT_EQ(find_arch("gfx90a:sramecc+:xnack-"), find_arch("gfx90a"));
  EXPECT_EQ(find_arch("sm_42"), nullptr);
  EXPECT_EQ(find_arch(""), nullptr);
}

TEST(Arch, SmVersionIsNvidiasNumberAndZeroElsewhere) {
  EXPECT_EQ(sm_version("sm_90"), 90);
  EXPECT_EQ(sm_version("sm_90a"), 90);
  EXPECT_EQ(sm_version("compute_80"), 80);
  EXPECT_EQ(sm_version("SM_100a"), 100);
  EXPECT_EQ(sm_version("gfx90a"), 0);  // an AMD target: not read as 90
  EXPECT_EQ(sm_version("gfx90a:sramecc+:xnack-"), 0);
  EXPECT_EQ(sm_version(""), 0);
}

TEST(Arch, HopperRatesAreThoseOfItsWhitepaper) {
  // H100 SXM: 256 FP32 FLOP/clk per SM, 512 FP16 (vector), 4096 dense FP16 on the tensor cores.
  const Arch* h = find_arch("sm_90");
  EXPECT_DOUBLE_EQ(h->rates.fp32, 256);
  EXPECT_DOUBLE_EQ(h->rates.fp16, 512);
  EXPECT_DOUBLE_EQ(h->rates.fp16_matrix, 4096);
  ASSERT_TRUE(h->has_limits);
  EXPECT_EQ(h->limits.name, "sm_90");
  EXPECT_EQ(h->limits.family, "Hopper");
}

TEST(Arch, OccupancyTableIsTheRowsWithLimitsInTableOrder) {
  std::vector<std::string> with_limits;
  for (auto& a : architectures()) {
    EXPECT_GT(a.rates.fp32, 0) << a.name;  // every row has rates
    if (a.has_limits) {
      EXPECT_EQ(a.limits.name, a.name);
      with_limits.push_back(a.name);
    }
  }
  EXPECT_EQ(occupancy_arch_names(), with_limits);
  EXPECT_EQ(with_limits.front(), "sm_70");
  EXPECT_EQ(with_limits.back(), "gfx1102");
}

TEST(Arch, RatesWithoutLimitsLeaveOccupancyUnknown) {
  // CDNA4 has rates (the backend's theoretical peaks) but no occupancy limits in the table.
  const Arch* b = find_arch("gfx950");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->has_limits);
  EXPECT_DOUBLE_EQ(b->rates.fp16_matrix, 4096);
  EXPECT_THROW(arch_limits("gfx950"), InvalidArgument);
  EXPECT_THROW(compute_occupancy("gfx950", 128, 32, 0), InvalidArgument);
}

TEST(Arch, EveryCoveredNvidiaArchitectureHasRatesAndLimits) {
  // The architectures the default CUDA build makes code for (cmake/cuda_architectures.cmake) and
  // those its sm_80 code runs on. FP8 matrix units from sm_89 on.
  for (const char* name : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) {
    const Arch* a = find_arch(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_TRUE(a->has_limits) << name;
    EXPECT_GT(a->rates.fp32, 0) << name;
    EXPECT_GT(a->rates.fp16_matrix, 0) << name;
    EXPECT_GT(a->rates.bf16_matrix, 0) << name;
    EXPECT_GT(a->rates.tf32_matrix, 0) << name;
    EXPECT_GT(a->rates.int8_matrix, 0) << name;
    EXPECT_GT(a->rates.fp64, 0) << name;
    EXPECT_EQ(a->rates.fp8_matrix > 0, sm_version(name) >= 89) << name;
    EXPECT_EQ(a->limits.max_registers_per_block, 65536) << name;
  }
}

TEST(Arch, BlackwellRowsAreThoseOfTheDatasheetsAndTheOccupancyHeader) {
  // B200: 2.25 PFLOP/s dense FP16 on 148 SMs (8192 a clock), FP8 and INT8 twice, TF32 half;
  // RTX 5090: 419 TFLOP/s FP16 with FP16 accumulation on 170 SMs at 2407 MHz (1024 a clock).
  const Arch* b = find_arch("sm_100");
  const Arch* r = find_arch("sm_120");
  ASSERT_NE(b, nullptr);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(b->rates.fp16_matrix, 8192);
  EXPECT_DOUBLE_EQ(b->rates.fp8_matrix, 16384);
  EXPECT_DOUBLE_EQ(b->rates.tf32_matrix, 4096);
  EXPECT_DOUBLE_EQ(r->rates.fp16_matrix, 1024);
  EXPECT_DOUBLE_EQ(r->rates.fp8_matrix, 2048);
  EXPECT_NEAR(170 * 2407e6 * r->rates.fp16_matrix / 1e12, 419, 1);
  // 2048 threads, 32 blocks, 228 KB an SM (227 KB a block) on sm_100; 1536, 24 and 100 KB (99) on
  // sm_120, as on sm_89.
  EXPECT_EQ(b->limits.max_warps, 64);
  EXPECT_EQ(b->limits.max_blocks, 32);
  EXPECT_EQ(b->limits.shared_mem_per_unit, 228 * 1024);
  EXPECT_EQ(b->limits.max_shared_mem_per_block, 227 * 1024);
  EXPECT_EQ(r->limits.max_warps, 48);
  EXPECT_EQ(r->limits.max_blocks, 24);
  EXPECT_EQ(r->limits.shared_mem_per_unit, 100 * 1024);
  EXPECT_EQ(r->limits.max_shared_mem_per_block, 99 * 1024);
  // 256-thread blocks of 64 registers: 4 blocks by registers (64K / (64 x 256)) on both; 48 KB of
  // shared memory each: 4 on sm_100 (228 KB), 2 on sm_120 (100 KB).
  EXPECT_EQ(compute_occupancy("sm_100", 256, 64, 48 * 1024).active_blocks, 4);
  EXPECT_EQ(compute_occupancy("sm_120", 256, 64, 48 * 1024).active_blocks, 2);
}

TEST(Arch, GeForcePartsHalveTheMatrixRatesOfFp32Accumulation) {
  // RTX 4090: FP16 165.2, BF16 165.2, TF32 82.6, FP8 330.3 TFLOP/s with FP32 accumulation, INT8
  // 660.6 TOP/s, on 128 SMs at 2520 MHz; L40S (the same AD102): 362, 362, 183, 733 and 733 on 142.
  const Arch* ada = find_arch("sm_89");
  ASSERT_NE(ada, nullptr);
  const ArchRates g = rates_for_device(*ada, "NVIDIA GeForce RTX 4090");
  const ArchRates l = rates_for_device(*ada, "NVIDIA L40S");
  const double rtx = 128 * 2520e6 / 1e12, l40s = 142 * 2520e6 / 1e12;
  EXPECT_NEAR(g.fp16_matrix * rtx, 165.2, 0.5);
  EXPECT_NEAR(g.bf16_matrix * rtx, 165.2, 0.5);
  EXPECT_NEAR(g.tf32_matrix * rtx, 82.6, 0.5);
  EXPECT_NEAR(g.fp8_matrix * rtx, 330.3, 0.5);
  EXPECT_NEAR(g.int8_matrix * rtx, 660.6, 0.5);
  EXPECT_NEAR(l.fp16_matrix * l40s, 362, 5);
  EXPECT_NEAR(l.fp8_matrix * l40s, 733, 5);
  EXPECT_DOUBLE_EQ(g.fp32, l.fp32);  // the vector units are the same
  // RTX 3090 (82 SMs, 1695 MHz): 71 TFLOP/s FP16 with FP32 accumulation; A40 keeps the table's.
  const Arch* ga = find_arch("sm_86");
  EXPECT_NEAR(rates_for_device(*ga, "NVIDIA GeForce RTX 3090").fp16_matrix * 82 * 1695e6 / 1e12, 71, 0.5);
  EXPECT_DOUBLE_EQ(rates_for_device(*ga, "NVIDIA A40").fp16_matrix, ga->rates.fp16_matrix);
  // An AMD part is never halved by this rule.
  const Arch* navi = find_arch("gfx1100");
  EXPECT_DOUBLE_EQ(rates_for_device(*navi, "GeForce-named by mistake").fp16_matrix, navi->rates.fp16_matrix);
}

TEST(Arch, GpuCodeRunsWhereNvidiasCompatibilityRulesSay) {
  // Machine code: its major version, its own minor and up.
  EXPECT_TRUE(gpu_code_runs_on("80-real", "sm_80"));
  EXPECT_TRUE(gpu_code_runs_on("80-real", "sm_86"));
  EXPECT_TRUE(gpu_code_runs_on("80-real", "sm_89"));
  EXPECT_FALSE(gpu_code_runs_on("86-real", "sm_80"));
  EXPECT_FALSE(gpu_code_runs_on("80-real", "sm_90"));
  EXPECT_TRUE(gpu_code_runs_on("100-real", "sm_103"));
  EXPECT_FALSE(gpu_code_runs_on("100-real", "sm_110"));
  EXPECT_FALSE(gpu_code_runs_on("100-real", "sm_120"));
  EXPECT_TRUE(gpu_code_runs_on("120-real", "sm_121"));
  // "a" targets on themselves alone, "f" on their family.
  EXPECT_TRUE(gpu_code_runs_on("90a-real", "sm_90"));
  EXPECT_FALSE(gpu_code_runs_on("90a-real", "sm_100"));
  EXPECT_TRUE(gpu_code_runs_on("100f-real", "sm_103"));
  EXPECT_FALSE(gpu_code_runs_on("100a-real", "sm_103"));
  // PTX: every later architecture (the driver compiles it), but "a" PTX only its own.
  EXPECT_TRUE(gpu_code_runs_on("80-virtual", "sm_120"));
  EXPECT_TRUE(gpu_code_runs_on("90-virtual", "sm_100"));
  EXPECT_FALSE(gpu_code_runs_on("90-virtual", "sm_89"));
  EXPECT_FALSE(gpu_code_runs_on("90a-virtual", "sm_100"));
  // AMD: the target itself, whatever its features; never an NVIDIA entry.
  EXPECT_TRUE(gpu_code_runs_on("gfx90a", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(gpu_code_runs_on("gfx90a", "gfx942"));
  EXPECT_FALSE(gpu_code_runs_on("80-real", "gfx90a"));
  EXPECT_FALSE(gpu_code_runs_on("gfx90a", "sm_80"));
  // Nonsense is no code.
  for (const char* bad : {"", "80-fast", "-real", "x80-real", "80a-virtual-real", "123456-real"})
    EXPECT_FALSE(gpu_code_runs_on(bad, "sm_80")) << bad;
}

TEST(Arch, AGpuWithoutCodeGetsOneMessageNamingItTheBuildAndTheCommand) {
  const std::vector<std::string> hopper = {"90a-real", "90-virtual"};
  const std::vector<std::string> dflt = {"80-real", "90a-real", "100-real", "120-real"};
  // Covered: no message.
  EXPECT_EQ(gpu_code_missing("gpu:0 (NVIDIA H200)", "sm_90", hopper), "");
  EXPECT_EQ(gpu_code_missing("gpu:0 (NVIDIA A10)", "sm_86", dflt), "");
  EXPECT_EQ(gpu_code_missing("gpu:0 (NVIDIA GeForce RTX 5090)", "sm_120", dflt), "");
  // A fake A10 with a Hopper-only module: its architecture, the module's, and the command.
  const std::string m = gpu_code_missing("gpu:0 (NVIDIA A10)", "sm_86", hopper);
  EXPECT_NE(m.find("gpu:0 (NVIDIA A10) is sm_86"), std::string::npos) << m;
  EXPECT_NE(m.find("built for sm_90a, compute_90 (PTX)"), std::string::npos) << m;
  EXPECT_NE(m.find("CUDAARCHS=86 pip install --no-build-isolation ."), std::string::npos) << m;
  // Hopper's own code is asked for as 90a; a Thor (sm_110) past the default list.
  EXPECT_NE(gpu_code_missing("gpu:1 (x)", "sm_90", {"80-real"}).find("CUDAARCHS=90a pip"), std::string::npos);
  EXPECT_NE(gpu_code_missing("gpu:0 (Thor)", "sm_110", dflt).find("built for sm_80, sm_90a, sm_100, sm_120"),
            std::string::npos);
  // AMD: the HIP targets.
  const std::string a = gpu_code_missing("gpu:0 (AMD Radeon RX 6800)", "gfx1030", {"gfx90a", "gfx942"});
  EXPECT_NE(a.find("built for gfx90a, gfx942"), std::string::npos) << a;
  EXPECT_NE(a.find("-C cmake.define.BWPROF_HIP_TARGETS=gfx1030"), std::string::npos) << a;
  // Covered by the list, refused by the runtime (a driver older than the compiler): said too.
  const std::string r = gpu_code_missing("gpu:0 (NVIDIA H200)", "sm_90", hopper, "cudaErrorUnsupportedPtxVersion: x");
  EXPECT_NE(r.find("the GPU runtime refuses this bwprof module's code for it (cudaErrorUnsupportedPtxVersion: x; it was "
                   "built for sm_90a"), std::string::npos) << r;
  EXPECT_NE(r.find("CUDAARCHS=90a pip install"), std::string::npos) << r;
  // A build with no GPU architecture at all says so.
  EXPECT_NE(gpu_code_missing("gpu:0 (x)", "sm_80", {}).find("built for no GPU architecture"), std::string::npos);
}
