// GEMM, QKV and flash attention on the GPU at small, odd sizes: one launch each, checked against the
// float64 reference. No timing and no peak measurement, so the whole set also runs quickly under
// compute-sanitizer (make gpu-check-compute runs it under memcheck). Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <utility>
#include <vector>
#include <string>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "scoped_env.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;

struct GpuCase {
  std::string kernel, variant, dtype;
  Params params;
};

bool have_gpu() {
  for (auto& d : list_devices())
    if (d.kind == "gpu") return true;
  return false;
}

bool have_variant(const std::string& kernel, const std::string& variant) {
  for (auto& v : find_kernel(kernel).variants)
    if (v.backend == "gpu" && v.name == variant) return true;
  return false;
}

class GpuCompute : public ::testing::TestWithParam<GpuCase> {};

TEST_P(GpuCompute, OneLaunchMatchesFloat64Reference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const GpuCase& c = GetParam();
  if (!have_variant(c.kernel, c.variant)) GTEST_SKIP() << c.variant << " not in this build";
  const KernelFamily& k = find_kernel(c.kernel);
  Backend& gpu = backend_for("gpu");
  Problem p = make_problem(k, "gpu", c.variant, c.dtype, c.params);
  // Attention: the default choice, then each kernel by name (BWPROF_ATTN_KERNEL; a kernel that
  // cannot take the problem on this device says so and is passed over): flash with every tile shape
  // (BWPROF_FLASH_TILE), the vector-unit rows kernel for FP16/BF16 too, decode, and the Hopper
  // wgmma kernel persistent, with a block per tile (and paged K/V by cp.async), with two K/V stages and two Q slots (and O stored 16 bytes a thread), storing O 4 bytes a thread and (head dims 80, 96) P.V
  // 128 wide, with two K/V stages and three Q slots, three and one (where they fit), paged with K/V
  // by the copy engine wherever it takes the pages (by default cp.async below pages of 64); decode with its keys split for four waves (more splits for its last block to merge),
  // and with its ring depth and split count forced.
  // GEMM tensor: each mma.sync tile
  // (BWPROF_GEMM_TILE; the 16-row one at any M) beside the default choice.
  using Env = std::vector<std::pair<const char*, const char*>>;
  std::vector<Env> runs = {{}};
  if (c.kernel == "attention" && c.dtype != "fp32") {
    for (const char* t : {"0", "1", "2"}) runs.push_back({{"BWPROF_ATTN_KERNEL", "flash"}, {"BWPROF_FLASH_TILE", t}});
    for (const char* kern : {"rows", "decode", "wgmma"}) runs.push_back({{"BWPROF_ATTN_KERNEL", kern}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_PERSIST", "0"}, {"BWPROF_ATTN_PAGED_LOAD", "cp"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_STAGES", "2"}, {"BWPROF_ATTN_QSLOTS", "2"},
                    {"BWPROF_ATTN_STORE16", "1"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_STAGES", "2"}, {"BWPROF_ATTN_QSLOTS", "3"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_STAGES", "3"}, {"BWPROF_ATTN_QSLOTS", "1"}});
    // paged: the copy engine wherever it can take the pages (the default only from pages of 64)
    if (c.params.count("block_size")) runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_PAGED_LOAD", "tma"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_STORE16", "0"}});
    // O stored by the copy engine from shared memory (rows past seq_q and columns past the head clipped
    // by the tensor map), with the rule's rings and with a block per tile
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_O_TMA", "1"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_O_TMA", "0"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_O_TMA", "1"}, {"BWPROF_ATTN_PERSIST", "0"},
                    {"BWPROF_ATTN_QSLOTS", "2"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "decode"}, {"BWPROF_ATTN_DECODE_WAVES", "4"}});
    // decode with each warp's ring 2 deep and 3 splits, and as deep as fits (5 up to head dim 128,
    // 3 at 256) over half a wave of splits
    const bool d256 = c.params.count("head_dim") && c.params.at("head_dim") == "256";
    runs.push_back({{"BWPROF_ATTN_KERNEL", "decode"}, {"BWPROF_ATTN_DECODE_STAGES", "2"}, {"BWPROF_ATTN_DECODE_SPLITS", "3"}});
    runs.push_back({{"BWPROF_ATTN_KERNEL", "decode"}, {"BWPROF_ATTN_DECODE_STAGES", d256 ? "3" : "5"},
                    {"BWPROF_ATTN_DECODE_WAVES", "0.5"}});
    if (c.params.count("head_dim") && (c.params.at("head_dim") == "80" || c.params.at("head_dim") == "96"))
      runs.push_back({{"BWPROF_ATTN_KERNEL", "wgmma"}, {"BWPROF_ATTN_PV_NARROW", "0"}});
  } else if (c.kernel == "gemm" && c.variant == "tensor") {
    // and the skinny vector-unit kernel (BWPROF_GEMM_TILE=gemv, M <= 64: K split, and in one
    // piece, which stores C itself), the skinny tensor kernel (tc_skinny, M <= 64: its choice of
    // splits, one, five; its 16-bit fragment reads where ldmatrix would serve), wgmma tiles with K split 3, 7 and 32 ways (as far as K has
    // steps of 64; the splits meet in the tile's sums in split order) and one whole (where the
    // device has wgmma, on padded copies where N or K is odd; else mma.sync), and wgmma's choice
    // with padding wherever it needs it (BWPROF_GEMM_PAD=1); the splits meet in slots that the last
    // split adds (the default) and, the same splits, one after another (BWPROF_GEMM_REDUCE=chain);
    // from 128 rows copies padded to 128-byte rows (BWPROF_GEMM_PAD=128), alone and with 2 splits;
    // wgmma in clusters of two blocks sharing B's stages (BWPROF_GEMM_CLUSTER=2; a block past M
    // where the row tiles are odd), with K split by slots and by the chain, and never (=1);
    // mma.sync on the rows in place (BWPROF_GEMM_PAD=0: realigned in shared memory, or through
    // registers) and its 64x64 and 128x256 tiles with K split (finished by each tile's last block;
    // the 64x64 tile's partial sums also one element an atomic, BWPROF_GEMM_SPLIT_ADD=scalar)
    runs = {{},
            {{"BWPROF_GEMM_TILE", "small"}},
            {{"BWPROF_GEMM_TILE", "skinny"}},
            {{"BWPROF_GEMM_TILE", "skinny"}, {"BWPROF_GEMM_SPLITS", "5"}, {"BWPROF_GEMM_SPLIT_FINISH", "kernel"}},
            {{"BWPROF_GEMM_SPLIT_FINISH", "kernel"}},
            {{"BWPROF_GEMM_TILE", "gemv"}},
            {{"BWPROF_GEMM_TILE", "gemv"}, {"BWPROF_GEMM_SPLITS", "1"}},
            {{"BWPROF_GEMM_TILE", "tc_skinny"}},
            {{"BWPROF_GEMM_TILE", "tc_skinny"}, {"BWPROF_GEMM_SPLITS", "1"}},
            {{"BWPROF_GEMM_TILE", "tc_skinny"}, {"BWPROF_GEMM_SPLITS", "5"}},
            {{"BWPROF_GEMM_TILE", "tc_skinny"}, {"BWPROF_GEMM_LDMATRIX", "0"}},
            {{"BWPROF_GEMM_TILE", "128x128"}, {"BWPROF_GEMM_SPLITS", "3"}},
            {{"BWPROF_GEMM_TILE", "128x256"}, {"BWPROF_GEMM_SPLITS", "32"}},
            {{"BWPROF_GEMM_SPLITS", "7"}},
            {{"BWPROF_GEMM_TILE", "64x64"}, {"BWPROF_GEMM_SPLITS", "1"}},
            {{"BWPROF_GEMM_PAD", "1"}},
            {{"BWPROF_GEMM_SPLITS", "3"}, {"BWPROF_GEMM_REDUCE", "chain"}},
            {{"BWPROF_GEMM_TILE", "128x256"}, {"BWPROF_GEMM_SPLITS", "32"}, {"BWPROF_GEMM_REDUCE", "chain"}},
            {{"BWPROF_GEMM_TILE", "64x64"}, {"BWPROF_GEMM_SPLITS", "7"}, {"BWPROF_GEMM_REDUCE", "chain"}},
            {{"BWPROF_GEMM_PAD", "128"}},
            {{"BWPROF_GEMM_PAD", "128"}, {"BWPROF_GEMM_SPLITS", "2"}},
            {{"BWPROF_GEMM_TILE", "64x128"}, {"BWPROF_GEMM_CLUSTER", "2"}},
            {{"BWPROF_GEMM_TILE", "128x128"}, {"BWPROF_GEMM_SPLITS", "3"}, {"BWPROF_GEMM_CLUSTER", "2"}},
            {{"BWPROF_GEMM_SPLITS", "3"}, {"BWPROF_GEMM_REDUCE", "chain"}, {"BWPROF_GEMM_CLUSTER", "2"}},
            {{"BWPROF_GEMM_CLUSTER", "1"}},
            {{"BWPROF_GEMM_PAD", "0"}},
            {{"BWPROF_GEMM_PAD", "0"}, {"BWPROF_GEMM_UNALIGNED", "regs"}},
            {{"BWPROF_GEMM_TILE", "small"}, {"BWPROF_GEMM_SPLITS", "4"}},
            {{"BWPROF_GEMM_TILE", "small"}, {"BWPROF_GEMM_SPLITS", "4"}, {"BWPROF_GEMM_SPLIT_ADD", "scalar"}},
            {{"BWPROF_GEMM_TILE", "large"}, {"BWPROF_GEMM_SPLITS", "3"}}};
  }
  for (const Env& env : runs) {
    std::string what;
    for (auto& e : env) setenv(e.first, e.second, 1), what += std::string(" ") + e.first + "=" + e.second;
    std::unique_ptr<KernelInstance> inst;
    try {
      inst = find_variant(k, "gpu", c.variant).make(gpu, p);
    } catch (const InvalidArgument& e) {  // a kernel asked for by name that does not take this problem
      for (auto& e2 : env) unsetenv(e2.first);
      const std::string msg = e.what();
      if (!env.empty() && (msg.find("BWPROF_ATTN_KERNEL=") != std::string::npos ||
                           msg.find("BWPROF_ATTN_STAGES") != std::string::npos ||  // rings that do not fit
                           msg.find("BWPROF_GEMM_TILE=") != std::string::npos))
        continue;
      throw;
    }
    inst->launch();
    gpu.synchronize();
    Check r = inst->check();
    EXPECT_TRUE(r.ok) << c.kernel << " " << c.variant << " " << c.dtype << " " << p.shape() << what
                      << ": error " << r.max_rel_error << " > " << r.tolerance;
    for (auto& e : env) unsetenv(e.first);
  }
}

std::vector<GpuCase> cases() {
  std::vector<GpuCase> out;
  const std::vector<Params> gemms = {
      {{"M", "33"}, {"N", "77"}, {"K", "129"}},
      {{"M", "70"}, {"N", "136"}, {"K", "40"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "130"}, {"N", "264"}, {"K", "72"}, {"bias", "true"}, {"act", "relu"}},
      {{"M", "1"}, {"N", "40"}, {"K", "24"}},
      // M <= 16 (the 16-row tile), K split over blocks, odd and aligned N/K, with an epilogue
      {{"M", "3"}, {"N", "77"}, {"K", "1029"}},
      {{"M", "16"}, {"N", "264"}, {"K", "2048"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "7"}, {"N", "129"}, {"K", "3001"}, {"bias", "true"}, {"act", "relu"}},
      // a few rows and a long K past 16 rows: split K on the 64 x 64 tile, unaligned
      {{"M", "33"}, {"N", "75"}, {"K", "2049"}, {"bias", "true"}},
      // up to 8 rows (the split-K kernel): odd widths, a 16-byte aligned one, a ragged last column block
      {{"M", "5"}, {"N", "4097"}, {"K", "1029"}},
      {{"M", "2"}, {"N", "1000"}, {"K", "3000"}, {"bias", "true"}, {"act", "silu"}},
      {{"M", "8"}, {"N", "9"}, {"K", "5"}},
      {{"M", "1"}, {"N", "263"}, {"K", "4095"}, {"bias", "true"}, {"act", "gelu"}},
      // the skinny kernel's groups of 8 rows (M 9-16 by default, up to 64 asked for by name), a
      // single column (rows of B 2 bytes apart: the aligned words of most rows reach past B's end
      // only near it), a width past one 256-column slab; odd everything for the padded copies
      {{"M", "12"}, {"N", "333"}, {"K", "517"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "3"}, {"N", "1"}, {"K", "1000"}},
      {{"M", "40"}, {"N", "263"}, {"K", "77"}, {"bias", "true"}, {"act", "relu"}},
      {{"M", "130"}, {"N", "257"}, {"K", "1001"}, {"bias", "true"}, {"act", "silu"}},
      {{"M", "17"}, {"N", "1000"}, {"K", "129"}},
      // one column, a short K and GELU (an older skinny kernel missed it: error 0.0133); few
      // output tiles and a long K, where the default choice splits K on wgmma
      {{"M", "1"}, {"N", "1"}, {"K", "75"}, {"act", "gelu"}},
      {{"M", "200"}, {"N", "304"}, {"K", "2048"}, {"bias", "true"}, {"act", "gelu"}},
      // the skinny tensor kernel's widest tile (M 33-64: 64 rows), odd N and K, a slab and a bit;
      // 17-32 rows over a K that is split many ways, N a ragged 130
      {{"M", "64"}, {"N", "1031"}, {"K", "700"}, {"bias", "true"}, {"act", "silu"}},
      {{"M", "24"}, {"N", "130"}, {"K", "4099"}},
      // past 256 rows, N = 1000 (rows of B off 128 bytes: clusters sharing B by default; the
      // 128-byte padded copy of B and of A by knob)
      {{"M", "257"}, {"N", "1000"}, {"K", "2056"}, {"bias", "true"}, {"act", "silu"}},
  };
  for (const char* v : {"tiled", "tensor", "vendor", "unfused"})
    for (const char* dt : {"fp32", "fp16", "bf16"}) {
      if (std::string(v) == "tensor" && std::string(dt) == "fp32") continue;
      for (auto& g : gemms) {
        // The vendor epilogue has no SiLU and says so (GpuComputeErrors.VendorGemmRefusesSilu).
        if (std::string(v) == "vendor" && g.count("act") && g.at("act") == "silu") continue;
        out.push_back({"gemm", v, dt, g});
      }
    }
  for (const char* v : {"fused", "separate"})
    for (const char* dt : {"fp32", "fp16", "bf16"})
      out.push_back({"qkv_projection", v, dt, {{"tokens", "19"}, {"hidden", "40"}}});
  const std::vector<Params> attn = {
      {{"heads", "2"}, {"seq_q", "70"}, {"head_dim", "64"}, {"causal", "true"}},
      {{"batch", "2"}, {"heads", "4"}, {"kv_heads", "2"}, {"seq_q", "33"}, {"seq_kv", "90"}, {"head_dim", "128"}},
      {{"heads", "3"}, {"seq_q", "17"}, {"head_dim", "32"}},
      {{"batch", "2"}, {"heads", "8"}, {"kv_heads", "2"}, {"seq_q", "1"}, {"seq_kv", "700"}, {"head_dim", "128"}},
      {{"heads", "2"}, {"seq_q", "3"}, {"seq_kv", "50"}, {"head_dim", "64"}, {"causal", "true"}},
      // head dims 80, 96 and 256; grouped-query ratios 3 and 7; batch 3; lengths off every tile
      {{"batch", "3"}, {"heads", "9"}, {"kv_heads", "3"}, {"seq_q", "37"}, {"seq_kv", "101"}, {"head_dim", "80"},
       {"causal", "true"}},
      {{"heads", "7"}, {"kv_heads", "1"}, {"seq_q", "1"}, {"seq_kv", "333"}, {"head_dim", "96"}},
      {{"heads", "6"}, {"kv_heads", "2"}, {"seq_q", "130"}, {"head_dim", "96"}, {"causal", "true"}},
      {{"batch", "3"}, {"heads", "14"}, {"kv_heads", "2"}, {"seq_q", "19"}, {"head_dim", "256"}, {"causal", "true"}},
      {{"heads", "2"}, {"seq_q", "1"}, {"seq_kv", "1000"}, {"head_dim", "256"}},
      {{"heads", "3"}, {"kv_heads", "1"}, {"seq_q", "5"}, {"seq_kv", "2100"}, {"head_dim", "80"}, {"causal", "true"}},
      // the Hopper kernel's shapes: whole 128-row tiles and a ragged last one, more tiles than SMs
      // (a block takes several), queries shorter than the keys under the mask, GQA 7
      {{"batch", "2"}, {"heads", "6"}, {"kv_heads", "2"}, {"seq_q", "300"}, {"head_dim", "128"}, {"causal", "true"}},
      {{"heads", "4"}, {"seq_q", "200"}, {"seq_kv", "517"}, {"head_dim", "64"}},
      {{"heads", "3"}, {"kv_heads", "1"}, {"seq_q", "150"}, {"seq_kv", "700"}, {"head_dim", "80"}, {"causal", "true"}},
      {{"heads", "7"}, {"kv_heads", "1"}, {"seq_q", "129"}, {"head_dim", "256"}, {"causal", "true"}},
      // short rows with more tiles than SMs: the rings go round; head dim 256 over a length off its
      // 64-key tile, not causal
      {{"batch", "2"}, {"heads", "24"}, {"kv_heads", "3"}, {"seq_q", "260"}, {"head_dim", "64"}, {"causal", "true"}},
      {{"batch", "3"}, {"heads", "16"}, {"kv_heads", "2"}, {"seq_q", "130"}, {"seq_kv", "203"}, {"head_dim", "128"}},
      {{"heads", "2"}, {"seq_q", "200"}, {"seq_kv", "333"}, {"head_dim", "256"}},
      {{"batch", "3"}, {"heads", "16"}, {"kv_heads", "4"}, {"seq_q", "1000"}, {"head_dim", "64"}, {"causal", "true"}},
      // the decode kernel's shapes: 21 rows a KV head (two 16-row tiles), 16 at head dim 256, many splits
      {{"heads", "7"}, {"kv_heads", "1"}, {"seq_q", "3"}, {"seq_kv", "900"}, {"head_dim", "128"}, {"causal", "true"}},
      {{"heads", "16"}, {"kv_heads", "1"}, {"seq_q", "1"}, {"seq_kv", "1500"}, {"head_dim", "256"}},
      {{"heads", "8"}, {"seq_q", "1"}, {"seq_kv", "5000"}, {"head_dim", "64"}},
      // decode: 32 rows of a KV head over many splits (the last block's merge with one part), MHA
      {{"heads", "8"}, {"kv_heads", "1"}, {"seq_q", "4"}, {"seq_kv", "5000"}, {"head_dim", "128"}, {"causal", "true"}},
      {{"batch", "2"}, {"heads", "5"}, {"seq_q", "1"}, {"seq_kv", "3001"}, {"head_dim", "80"}},
  };
  // Paged: pages of 7 (no kernel's tile holds whole ones) and of 16 (two 8-row swizzle groups).
  for (const char* v : {"flash", "flash_paged"})
    for (const char* dt : {"fp32", "fp16", "bf16"})
      for (auto a : attn) {
        if (std::string(v) == "flash") {
          out.push_back({"attention", v, dt, a});
          continue;
        }
        for (const char* bs : {"7", "16"}) {
          a["block_size"] = bs;
          out.push_back({"attention", v, dt, a});
        }
      }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<GpuCase>& info) {
  return info.param.kernel + "_" + info.param.variant + "_" + info.param.dtype + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Small, GpuCompute, ::testing::ValuesIn(cases()), case_name);

}  // namespace

TEST(GpuComputeErrors, UnsupportedHeadDimNamesTheSupportedOnes) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const KernelFamily& k = find_kernel("attention");
  for (const char* d : {"48", "112", "160", "512"}) {
    Problem p = make_problem(k, "gpu", "flash", "bf16", {{"heads", "2"}, {"seq_q", "8"}, {"head_dim", d}});
    try {
      find_variant(k, "gpu", "flash").make(backend_for("gpu"), p);
      FAIL() << "head_dim " << d << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("32, 64, 80, 96, 128 and 256"), std::string::npos) << e.what();
    }
  }
}

TEST(GpuComputeErrors, VendorGemmRefusesSilu) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (!have_variant("gemm", "vendor")) GTEST_SKIP() << "vendor not in this build";
  const KernelFamily& k = find_kernel("gemm");
  for (const char* dt : {"fp32", "fp16", "bf16"}) {
    Problem p = make_problem(k, "gpu", "vendor", dt, {{"M", "2"}, {"N", "40"}, {"K", "24"}, {"act", "silu"}});
    try {
      find_variant(k, "gpu", "vendor").make(backend_for("gpu"), p);
      FAIL() << "vendor " << dt << " accepted act=silu";
    } catch (const InvalidArgument& e) {
      const std::string msg = e.what();
      // It names the argument and a variant that runs SiLU (cuBLASLt's says silu; rocBLAS has no
      // epilogue at all and says that).
      EXPECT_EQ(msg.rfind("act:", 0), 0u) << msg;
      EXPECT_NE(msg.find("unfused"), std::string::npos) << msg;
    }
  }
}

// Instances of one Q4_0 kernel that stage X of different sizes in shared memory: the limit on a
// launch's shared memory is the kernel function's, shared by all of them, so an instance made later
// must not lower it under an earlier one's X (a program may make several before running any). Each
// kernel: instances with K = 4096, 256 and 2048 made in that order, then run in the same order.
TEST(GpuComputeQ4, InstancesOfOneKernelWithDifferentXRunInAnyOrder) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (!have_variant("q4_0_matmul", "tiled")) GTEST_SKIP() << "tiled not in this build";
  const KernelFamily& k = find_kernel("q4_0_matmul");
  Backend& gpu = backend_for("gpu");
  for (const char* kern : {"ring8x4rl", "ring16x2rle", "ring4x4l"}) {
    ScopedEnv env("BWPROF_Q4_KERNEL", kern);
    const std::vector<std::string> ks = {"4096", "256", "2048"};
    std::vector<std::unique_ptr<KernelInstance>> insts;
    for (const auto& K : ks)
      insts.push_back(find_variant(k, "gpu", "tiled").make(gpu, make_problem(k, "gpu", "tiled", "fp16",
                                                                           {{"M", "1"}, {"N", "33"}, {"K", K}})));
    for (std::size_t i = 0; i < insts.size(); ++i) {
      insts[i]->launch();
      gpu.synchronize();
      Check r = insts[i]->check();
      EXPECT_TRUE(r.ok) << kern << " K = " << ks[i] << ": error " << r.max_rel_error;
    }
  }
}

// The skinny tensor GEMM (kernels/gemm/skinny_mma.hip) on each of its paths, asked for by name:
// 8, 16, 32 and 64-row tiles; B's rows aligned (ldmatrix) and not (16-bit reads at each row's
// shift), and aligned with the 16-bit reads forced; K whole, split its way and split 3 ways; a
// bias and each activation; FP16 and BF16. Small enough for compute-sanitizer (make
// gpu-gemm-small runs it under memcheck).
TEST(GpuSkinnyTensorGemm, EveryPathMatchesFloat64Reference) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const KernelFamily& k = find_kernel("gemm");
  Backend& gpu = backend_for("gpu");
  if (gpu.info().arch.rfind("sm_", 0) != 0 || std::atoi(gpu.info().arch.c_str() + 3) < 80)
    GTEST_SKIP() << "the NVIDIA dispatch (sm_80+)";
  const std::vector<Params> shapes = {
      {{"M", "2"}, {"N", "131"}, {"K", "301"}, {"act", "relu"}},
      {{"M", "8"}, {"N", "256"}, {"K", "200"}, {"bias", "true"}},
      {{"M", "11"}, {"N", "1001"}, {"K", "97"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "32"}, {"N", "136"}, {"K", "520"}, {"act", "silu"}},
      {{"M", "33"}, {"N", "7"}, {"K", "1003"}, {"bias", "true"}},
      {{"M", "64"}, {"N", "264"}, {"K", "33"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "1"}, {"N", "129"}, {"K", "65"}},
  };
  using Env = std::vector<std::pair<const char*, const char*>>;
  const std::vector<Env> runs = {{},
                                 {{"BWPROF_GEMM_SPLITS", "1"}},
                                 {{"BWPROF_GEMM_SPLITS", "3"}},
                                 {{"BWPROF_GEMM_LDMATRIX", "0"}}};
  ScopedEnv tile("BWPROF_GEMM_TILE", "tc_skinny");
  for (const char* dt : {"fp16", "bf16"})
    for (const Params& s : shapes)
      for (const Env& env : runs) {
        std::vector<std::unique_ptr<ScopedEnv>> set;
        std::string what;
        for (auto& e : env) {
          set.push_back(std::make_unique<ScopedEnv>(e.first, e.second));
          what += std::string(" ") + e.first + "=" + e.second;
        }
        Problem p = make_problem(k, "gpu", "tensor", dt, s);
        auto inst = find_variant(k, "gpu", "tensor").make(gpu, p);
        for (int rep = 0; rep < 2; ++rep) inst->launch();  // twice: the split counters reset themselves
        gpu.synchronize();
        Check r = inst->check();
        EXPECT_TRUE(r.ok) << dt << " " << p.shape() << what << ": error " << r.max_rel_error << " > " << r.tolerance;
      }
}

TEST(GpuComputeErrors, AnUnknownAttentionKernelNameIsAnError) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const KernelFamily& k = find_kernel("attention");
  Problem p = make_problem(k, "gpu", "flash", "bf16", {{"heads", "2"}, {"seq_q", "8"}, {"head_dim", "64"}});
  setenv("BWPROF_ATTN_KERNEL", "fastest", 1);
  EXPECT_THROW(find_variant(k, "gpu", "flash").make(backend_for("gpu"), p), InvalidArgument);
  unsetenv("BWPROF_ATTN_KERNEL");
}
