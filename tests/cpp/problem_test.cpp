// Parameters are parsed once, into typed values, when the problem is made.
#include <gtest/gtest.h>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"

using namespace bwprof;

TEST(Problem, ParametersAreTypedValuesInSpecOrder) {
  const KernelFamily& g = find_kernel("gemm");
  Problem p = make_problem(g, "cpu", "", "fp16", {{"K", "0896"}, {"M", "128"}, {"N", "4864"}, {"bias", "yes"},
                                                  {"act", "gelu"}});
  ASSERT_EQ(p.params.size(), 8u);  // and engine, tile, splits at "auto": out of the shape
  EXPECT_EQ(p.params[0].first, "M");
  EXPECT_TRUE(p.params[0].second.is_int());
  EXPECT_TRUE(p.params[3].second.is_bool());
  EXPECT_TRUE(p.params[4].second.is_text());
  EXPECT_EQ(p.i("K"), 896);
  EXPECT_TRUE(p.b("bias"));
  EXPECT_EQ(p.s("act"), "gelu");
  // The shape prints the normalised values, bools as 0/1, exactly as the record has always shown it.
  EXPECT_EQ(p.shape(), "M=128,N=4864,K=896,bias=1,act=gelu");
  EXPECT_EQ(p.params_text()[3], (std::pair<std::string, std::string>("bias", "1")));
}

TEST(Problem, AskingForAnotherKindIsAnInternalError) {
  const KernelFamily& g = find_kernel("gemm");
  Problem p = make_problem(g, "cpu", "", "fp32", {{"M", "2"}, {"N", "3"}, {"K", "4"}});
  EXPECT_THROW(p.b("M"), Error);
  EXPECT_THROW(p.i("bias"), Error);
  EXPECT_THROW(p.i("act"), Error);
  EXPECT_THROW(p.i("nope"), Error);
  EXPECT_THROW(p.set("M", true), Error);
  EXPECT_THROW(p.set("nope", 1), Error);
  p.set("M", 7);
  EXPECT_EQ(p.i("M"), 7);
  EXPECT_EQ(p.shape(), "M=7,N=3,K=4,bias=0,act=none");
}

TEST(Problem, ResolveFillsDerivedDefaultsAsIntegers) {
  // attention: kv_heads = 0 and seq_kv = 0 mean "same as heads / seq_q".
  const KernelFamily& a = find_kernel("attention");
  Problem p = make_problem(a, "cpu", "", "fp32", {{"heads", "6"}, {"seq_q", "9"}, {"head_dim", "8"}});
  EXPECT_EQ(p.i("kv_heads"), 6);
  EXPECT_EQ(p.i("seq_kv"), 9);
  EXPECT_EQ(p.shape(), "batch=1,heads=6,kv_heads=6,seq_q=9,seq_kv=9,head_dim=8,causal=0,block_size=16");
}

namespace {

// A family of one CPU variant with a kernel choice of each kind, for the rules of auto parameters.
KernelFamily choice_family() {
  KernelFamily k;
  k.name = k.family = "choice_test";
  k.params = {int_param("n", "", 1, 100, "size"),
              auto_choice_param("tile", {"small", "large"}, {"fast"}, "the tile"),
              auto_int_param("splits", 1, 64, {"fast"}, "the split"),
              auto_int_param("depth", 2, 8, {}, "the ring")};
  k.dtypes = {DType::kF32};
  k.traffic = [](const Problem&) { return Traffic{1, 1, 0}; };
  k.variants.push_back(Variant{"fast", "cpu", nullptr});
  k.variants.push_back(Variant{"plain", "cpu", nullptr});
  return k;
}

}  // namespace

TEST(Problem, AutoChoicesStayOutOfTheShapeAndShowWhenSet) {
  const KernelFamily k = choice_family();
  Problem p = make_problem(k, "cpu", "fast", "fp32", {{"n", "5"}});
  EXPECT_EQ(p.shape(), "n=5");
  EXPECT_EQ(p.s("tile"), "auto");
  EXPECT_FALSE(p.opt_i("splits"));
  EXPECT_THROW(p.i("splits"), Error);  // "auto" is no integer: opt_i says so
  p = make_problem(k, "cpu", "fast", "fp32", {{"n", "5"}, {"tile", "large"}, {"splits", "3"}, {"depth", "auto"}});
  EXPECT_EQ(p.shape(), "n=5,tile=large,splits=3");
  EXPECT_EQ(p.opt_i("splits").value(), 3);
  EXPECT_EQ(p.i("splits"), 3);
  EXPECT_FALSE(p.opt_i("depth"));
}

TEST(Problem, AutoChoicesAreCheckedAndApplyToTheirVariantsOnly) {
  const KernelFamily k = choice_family();
  auto make = [&](const char* variant, std::map<std::string, std::string> params) {
    params.emplace("n", "5");
    return make_problem(k, "cpu", variant, "fp32", params);
  };
  EXPECT_THROW(make("fast", {{"tile", "huge"}}), InvalidArgument);
  EXPECT_THROW(make("fast", {{"splits", "0"}}), InvalidArgument);
  EXPECT_THROW(make("fast", {{"splits", "65"}}), InvalidArgument);
  EXPECT_THROW(make("fast", {{"splits", "two"}}), InvalidArgument);
  EXPECT_THROW(make("fast", {{"splits", "Auto"}}), InvalidArgument);
  EXPECT_THROW(make("fast", {{"n", "auto"}}), InvalidArgument);  // a plain integer takes no "auto"
  // Set on a variant it does not apply to: an error naming the variants it does apply to.
  try {
    make("plain", {{"tile", "small"}});
    FAIL() << "tile=small on the plain variant was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("tile: applies to the fast variant of kernel 'choice_test', not 'plain'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make("plain", {{"splits", "2"}}), InvalidArgument);
  EXPECT_EQ(make("plain", {{"tile", "auto"}, {"depth", "4"}}).shape(), "n=5,depth=4");  // "auto" is no setting
}
