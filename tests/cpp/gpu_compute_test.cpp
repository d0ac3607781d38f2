// GEMM, QKV and flash attention on the GPU at small, odd sizes: one launch each, checked against the
// float64 reference. No timing and no peak measurement, so the whole set also runs quickly under
// compute-sanitizer (make gpu-check runs it under memcheck). Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <utility>
#include <vector>
#include <string>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "test_util.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;

struct GpuCase {
  std::string kernel, variant, dtype;
  Params params;
};

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
  // The default choice, then the kernel choices the family's parameters ask for (a choice that the
  // problem or the device cannot take says so and is passed over). Attention: each kernel by name
  // (engine), and key splits asked for; the wgmma kernel's rings, O store and page loads follow its
  // rules across the shapes below. GEMM tensor: each engine and tile, with K split as asked (wgmma's
  // splits meeting by slots, and by the chain where the slots would be too large), and the choice
  // of splits alone.
  std::vector<Params> runs = {{}};
  if (c.kernel == "attention" && c.dtype != "fp32") {
    for (const char* e : {"flash", "rows", "decode", "wgmma"}) runs.push_back({{"engine", e}});
    runs.push_back({{"engine", "decode"}, {"splits", "3"}});
    runs.push_back({{"engine", "decode"}, {"splits", "200"}});  // as many as the merge holds
    runs.push_back({{"engine", "flash"}, {"splits", "2"}});
    runs.push_back({{"engine", "rows"}, {"splits", "5"}});
  } else if (c.kernel == "gemm" && c.variant == "tensor") {
    runs = {{},
            {{"engine", "mma"}},
            {{"engine", "mma"}, {"tile", "64x64"}},
            {{"engine", "mma"}, {"tile", "128x128"}, {"splits", "3"}},
            {{"engine", "mma"}, {"tile", "64x64"}, {"splits", "4"}},
            {{"engine", "mma"}, {"tile", "16x128"}},
            {{"engine", "mma"}, {"tile", "16x128"}, {"splits", "5"}},
            {{"engine", "skinny"}},
            {{"engine", "skinny"}, {"splits", "1"}},
            {{"engine", "skinny"}, {"splits", "5"}},
            {{"engine", "wgmma"}},
            {{"engine", "wgmma"}, {"tile", "128x128"}, {"splits", "3"}},
            {{"engine", "wgmma"}, {"tile", "128x256"}, {"splits", "32"}},
            {{"engine", "wgmma"}, {"tile", "64x64"}, {"splits", "1"}},
            {{"engine", "wgmma"}, {"tile", "64x128"}, {"splits", "7"}},
            {{"splits", "7"}}};
  }
  for (const Params& run : runs) {
    Params params = c.params;
    std::string what;
    for (auto& e : run) params[e.first] = e.second, what += " " + e.first + "=" + e.second;
    std::unique_ptr<KernelInstance> inst;
    Problem p;
    try {
      p = make_problem(k, "gpu", c.variant, c.dtype, params);
      inst = find_variant(k, "gpu", c.variant).make(gpu, p);
    } catch (const InvalidArgument& e) {  // a choice that does not take this problem here
      const std::string msg = e.what();
      if (!run.empty() && (msg.rfind("engine:", 0) == 0 || msg.rfind("tile:", 0) == 0 || msg.rfind("splits:", 0) == 0))
        continue;
      throw;
    }
    inst->launch();
    gpu.synchronize();
    Check r = inst->check();
    EXPECT_TRUE(r.ok) << c.kernel << " " << c.variant << " " << c.dtype << " " << p.shape() << what << " ("
                      << inst->explain() << "): error " << r.max_rel_error << " > " << r.tolerance;
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
      // past 256 rows, N = 1000 (rows of B off 128 bytes: clusters sharing B), an odd number of
      // row tiles
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
// kernel that stages X (ring8x4rl for 2 rows of X, ring16x2rle for one long row: q4_0.hpp's rule):
// instances with three row lengths made in that order, then run in the same order.
TEST(GpuComputeQ4, InstancesOfOneKernelWithDifferentXRunInAnyOrder) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (!have_variant("q4_0_matmul", "tiled")) GTEST_SKIP() << "tiled not in this build";
  const KernelFamily& k = find_kernel("q4_0_matmul");
  Backend& gpu = backend_for("gpu");
  struct Kernel {
    const char* name;
    const char* M;
    std::vector<std::string> ks;
  };
  for (const Kernel& kern : {Kernel{"ring8x4rl", "2", {"4096", "256", "2048"}},
                             Kernel{"ring16x2rle", "1", {"8192", "4128", "6144"}}}) {
    const std::vector<std::string>& ks = kern.ks;
    std::vector<std::unique_ptr<KernelInstance>> insts;
    for (const auto& K : ks) {
      insts.push_back(find_variant(k, "gpu", "tiled").make(gpu, make_problem(k, "gpu", "tiled", "fp16",
                                                                           {{"M", kern.M}, {"N", "33"}, {"K", K}})));
      EXPECT_EQ(insts.back()->explain(), kern.name) << "M " << kern.M << " K " << K;
    }
    for (std::size_t i = 0; i < insts.size(); ++i) {
      insts[i]->launch();
      gpu.synchronize();
      Check r = insts[i]->check();
      EXPECT_TRUE(r.ok) << kern.name << " K = " << ks[i] << ": error " << r.max_rel_error;
    }
  }
}

// The skinny tensor GEMM (kernels/gemm/skinny_mma.hip) on each of its paths, asked for by name
// (engine=skinny): 8, 16, 32 and 64-row tiles; B's rows aligned (ldmatrix) and not (16-bit reads at
// each row's shift); K whole, split its way and split 3 ways; a bias and each activation; FP16 and BF16. Small enough for compute-sanitizer (make
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
  for (const char* dt : {"fp16", "bf16"})
    for (const Params& s : shapes)
      for (const char* splits : {"auto", "1", "3"}) {
        Params params = s;
        params["engine"] = "skinny", params["splits"] = splits;
        Problem p = make_problem(k, "gpu", "tensor", dt, params);
        auto inst = find_variant(k, "gpu", "tensor").make(gpu, p);
        EXPECT_EQ(inst->explain().rfind("skinny", 0), 0u) << inst->explain();
        for (int rep = 0; rep < 2; ++rep) inst->launch();  // twice: the split counters reset themselves
        gpu.synchronize();
        Check r = inst->check();
        EXPECT_TRUE(r.ok) << dt << " " << p.shape() << " (" << inst->explain() << "): error " << r.max_rel_error
                          << " > " << r.tolerance;
      }
}

TEST(GpuComputeErrors, AnUnknownAttentionKernelNameIsAnError) {
  if (!have_variant("attention", "flash")) GTEST_SKIP() << "flash not in this build";
  const KernelFamily& k = find_kernel("attention");
  EXPECT_THROW(make_problem(k, "gpu", "flash", "bf16", {{"heads", "2"}, {"seq_q", "8"}, {"head_dim", "64"},
                                                        {"engine", "fastest"}}),
               InvalidArgument);
}
