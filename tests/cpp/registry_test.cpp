// The registry as the build fills it: every family folder registered once, in order, each
// variant's flags declared with it. Also the environment every C++ test runs in: the built-in
// kernels loaded, as the Python module does at import.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/runner.hpp"

using namespace bwprof;

namespace {

class Builtins : public ::testing::Environment {
 public:
  void SetUp() override { load_builtins(); }
};
const auto* const kBuiltins = ::testing::AddGlobalTestEnvironment(new Builtins);

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (auto& k : kernel_registry()) out.push_back(k.name);
  return out;
}

const Variant& variant(const std::string& kernel, const std::string& backend, const std::string& name) {
  for (auto& v : find_kernel(kernel).variants)
    if (v.backend == backend && v.name == name) return v;
  throw Error("no variant " + kernel + "/" + name);
}

}  // namespace

TEST(Registry, EveryKernelInItsOrderOnce) {
  // The list as bwprof.kernels() has always shown it, fill after the stream kernels, the links
  // (transfers, peer copies, collectives) after the inference kernels, then the roof kernels: the
  // FMA chains, the matrix peak, the cache levels.
  const std::vector<std::string> expect = {
      "stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_dot", "stream_read", "fill", "gemm",
      "qkv_projection", "gemv", "attention", "kv_cache_append", "q4_0_dequant", "q4_0_matmul", "layernorm", "bias_act",
      "h2d", "d2h", "d2d", "memset", "p2p_copy", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
      "broadcast", "intensity_sweep", "fma_chain", "mma_peak", "l2_bandwidth", "l1_bandwidth", "shared_bandwidth"};
  EXPECT_EQ(names(), expect);
  load_builtins();  // a second load registers nothing twice
  EXPECT_EQ(names(), expect);
}

TEST(Registry, AddingANameTwiceIsAnError) {
  Registry r;
  KernelFamily k;
  k.name = "x";
  r.add_family(k);
  EXPECT_THROW(r.add_family(k), Error);
}

TEST(Registry, OrderSortsAndKeepsAFoldersSequence) {
  Registry r;
  auto kernel = [](const char* name, int order) {
    KernelFamily k;
    k.name = name;
    k.order = order;
    return k;
  };
  r.add_family(kernel("late", 50));
  r.add_family(kernel("first_of_folder", 10));
  r.add_family(kernel("second_of_folder", 10));
  r.add_family(kernel("middle", 20));
  std::vector<std::string> got;
  for (auto& k : r.families()) got.push_back(k.name);
  EXPECT_EQ(got, (std::vector<std::string>{"first_of_folder", "second_of_folder", "middle", "late"}));
  EXPECT_THROW(r.find("nope"), InvalidArgument);
}

TEST(Registry, VariantFlagsAreDeclaredWithTheVariants) {
  // The CPU variants compute on the vector units.
  for (auto& k : kernel_registry())
    for (auto& v : k.variants)
      if (v.backend == "cpu") EXPECT_FALSE(v.matrix_units) << k.name << "/" << v.name;
  // The ceilings the peaks policy measures: the five stream kernels (memory) and the FMA chains.
  std::set<std::string> memory, vector;
  for (auto& k : kernel_registry())
    for (auto& v : k.variants) {
      if (v.ceiling == Ceiling::kMemory) memory.insert(k.name);
      if (v.ceiling == Ceiling::kVector) vector.insert(k.name);
    }
  EXPECT_EQ(memory, (std::set<std::string>{"stream_copy", "stream_scale", "stream_add", "stream_triad", "stream_dot",
                                           "stream_read"}));
  EXPECT_EQ(vector, (std::set<std::string>{"fma_chain"}));
  // The matrix units and the cache levels: bwprof's own kernels, each flagged with its roof.
  std::map<std::string, std::set<std::string>> roofs;
  for (auto& k : kernel_registry())
    for (auto& v : k.variants)
      if (v.ceiling != Ceiling::kNone && v.ceiling != Ceiling::kMemory && v.ceiling != Ceiling::kVector)
        roofs[to_string(v.ceiling)].insert(k.name + "/" + v.backend);
  std::map<std::string, std::set<std::string>> expect_roofs = {{"l2", {"l2_bandwidth/cpu"}}, {"l1", {"l1_bandwidth/cpu"}}};
#ifdef BWPROF_WITH_GPU
  expect_roofs["l2"].insert("l2_bandwidth/gpu");
  expect_roofs["l1"].insert("l1_bandwidth/gpu");
  expect_roofs["shared"] = {"shared_bandwidth/gpu"};
  expect_roofs["matrix"] = {"mma_peak/gpu"};
#endif
  EXPECT_EQ(roofs, expect_roofs);
  EXPECT_EQ(variant("fma_chain", "cpu", "cpu").dtypes, (std::vector<DType>{DType::kF32}));
#ifdef BWPROF_WITH_GPU
  // The GPU variants whose FP16 work runs on the matrix units, and only those.
  std::set<std::string> matrix;
  for (auto& k : kernel_registry())
    for (auto& v : k.variants)
      if (v.matrix_units) matrix.insert(k.name + "/" + v.name);
  std::set<std::string> expect = {"gemm/tensor", "gemm/unfused", "qkv_projection/fused", "qkv_projection/separate",
                                  "attention/flash", "attention/flash_paged", "q4_0_matmul/tiled"};
#ifdef BWPROF_WITH_VENDOR_BLAS
  expect.insert("gemm/vendor");
#endif
  EXPECT_EQ(matrix, expect);
  EXPECT_EQ(variant("gemm", "gpu", "tensor").dtypes, (std::vector<DType>{DType::kF16, DType::kBF16}));
  // which dtypes run on the matrix units: FP16 and BF16, but only FP16 for the Q4_0 product's mma path
  EXPECT_TRUE(runs_on_matrix_units(variant("gemm", "gpu", "tensor"), DType::kBF16));
  EXPECT_TRUE(runs_on_matrix_units(variant("attention", "gpu", "flash"), DType::kBF16));
  EXPECT_FALSE(runs_on_matrix_units(variant("attention", "gpu", "flash"), DType::kF32));
  EXPECT_TRUE(runs_on_matrix_units(variant("q4_0_matmul", "gpu", "tiled"), DType::kF16));
  EXPECT_FALSE(runs_on_matrix_units(variant("q4_0_matmul", "gpu", "tiled"), DType::kBF16));
#endif
}

TEST(Registry, SuiteConfigurationsBuildValidProblems) {
  // Every suite configuration (full and quick) is a valid problem for the kernel, on the CPU where
  // the kernel has a CPU variant, else on the GPU where this build has a GPU variant (the links).
  int configs = 0, links = 0;
  for (auto& k : kernel_registry()) {
    const bool cpu = std::any_of(k.variants.begin(), k.variants.end(), [](const Variant& v) { return v.backend == "cpu"; });
    const bool gpu = std::any_of(k.variants.begin(), k.variants.end(), [](const Variant& v) { return v.backend == "gpu"; });
    for (auto& c : k.suite) {
      for (const ParamList* params : {&c.params, &c.quick}) {
        std::map<std::string, std::string> text;
        for (auto& kv : *params) text[kv.first] = kv.second.text();
        if (!cpu && !gpu) continue;  // a GPU-only kernel in a build without the GPU backend
        for (DType t : c.dtypes)
          EXPECT_NO_THROW(make_problem(k, cpu ? "cpu" : "gpu", "", to_string(t), text)) << k.name << " " << c.label;
      }
      (k.family == "transfer" || k.family == "p2p" || k.family == "collective" ? links : configs) += 1;
    }
  }
  EXPECT_EQ(configs, 47 + 1 + 1);  // the suite of the old suite.py, fill's and the clean read's configurations
  // Host copies 2 x 6 sizes, d2d and memset 2 x 4, peer copies 3 sizes x 2 directions, collectives 5 x 6 sizes.
  EXPECT_EQ(links, 12 + 8 + 6 + 30);
}
