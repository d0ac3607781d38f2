// Parameters are parsed once, into typed values, when the problem is made.
#include <gtest/gtest.h>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"

using namespace bwprof;

TEST(Problem, ParametersAreTypedValuesInSpecOrder) {
  const KernelFamily& g = find_kernel("gemm");
  Problem p = make_problem(g, "cpu", "", "fp16", {{"K", "0896"}, {"M", "128"}, {"N", "4864"}, {"bias", "yes"},
                                                  {"act", "gelu"}});
  ASSERT_EQ(p.params.size(), 5u);
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
