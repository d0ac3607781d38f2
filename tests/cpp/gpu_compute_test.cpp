// GEMM, QKV and flash attention on the GPU at small, odd sizes: one launch each, checked against the
// float64 reference. No timing and no peak measurement, so the whole set also runs quickly under
// compute-sanitizer (make gpu-check-compute runs it under memcheck). Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <vector>
#include <string>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"

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
  // Attention: every prefill tile shape (the BWPROF_FLASH_TILE knob), not only the default.
  const std::vector<const char*> tiles = c.kernel == "attention" ? std::vector<const char*>{"0", "1", "2"}
                                                                 : std::vector<const char*>{"0"};
  for (const char* tile : tiles) {
    setenv("BWPROF_FLASH_TILE", tile, 1);
    auto inst = find_variant(k, "gpu", c.variant).make(gpu, p);
    inst->launch();
    gpu.synchronize();
    Check r = inst->check();
    EXPECT_TRUE(r.ok) << c.kernel << " " << c.variant << " " << c.dtype << " " << p.shape() << " tile " << tile
                      << ": error " << r.max_rel_error << " > " << r.tolerance;
  }
  unsetenv("BWPROF_FLASH_TILE");
}

std::vector<GpuCase> cases() {
  std::vector<GpuCase> out;
  const std::vector<Params> gemms = {
      {{"M", "33"}, {"N", "77"}, {"K", "129"}},
      {{"M", "70"}, {"N", "136"}, {"K", "40"}, {"bias", "true"}, {"act", "gelu"}},
      {{"M", "130"}, {"N", "264"}, {"K", "72"}, {"bias", "true"}, {"act", "relu"}},
      {{"M", "1"}, {"N", "40"}, {"K", "24"}},
  };
  for (const char* v : {"tiled", "tensor", "vendor", "unfused"})
    for (const char* dt : {"fp32", "fp16"}) {
      if (std::string(v) == "tensor" && std::string(dt) == "fp32") continue;
      for (auto& g : gemms) out.push_back({"gemm", v, dt, g});
    }
  for (const char* v : {"fused", "separate"})
    for (const char* dt : {"fp32", "fp16"}) out.push_back({"qkv_projection", v, dt, {{"tokens", "19"}, {"hidden", "40"}}});
  const std::vector<Params> attn = {
      {{"heads", "2"}, {"seq_q", "70"}, {"head_dim", "64"}, {"causal", "true"}},
      {{"batch", "2"}, {"heads", "4"}, {"kv_heads", "2"}, {"seq_q", "33"}, {"seq_kv", "90"}, {"head_dim", "128"}},
      {{"heads", "3"}, {"seq_q", "17"}, {"head_dim", "32"}},
      {{"batch", "2"}, {"heads", "8"}, {"kv_heads", "2"}, {"seq_q", "1"}, {"seq_kv", "700"}, {"head_dim", "128"}},
      {{"heads", "2"}, {"seq_q", "3"}, {"seq_kv", "50"}, {"head_dim", "64"}, {"causal", "true"}},
  };
  for (const char* v : {"flash", "flash_paged"})
    for (const char* dt : {"fp32", "fp16"})
      for (auto a : attn) {
        if (std::string(v) == "flash_paged") a["block_size"] = "7";
        out.push_back({"attention", v, dt, a});
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
  Problem p = make_problem(k, "gpu", "flash", "fp16", {{"heads", "2"}, {"seq_q", "8"}, {"head_dim", "96"}});
  try {
    find_variant(k, "gpu", "flash").make(backend_for("gpu"), p);
    FAIL() << "head_dim 96 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("32, 64 and 128"), std::string::npos) << e.what();
  }
}
