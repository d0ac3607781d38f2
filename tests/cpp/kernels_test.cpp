// Every CPU reference kernel against the float64 gold on random inputs, odd sizes included, and
// proof that the check fails when an output is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "attention/attention.hpp"
#include "fill/fill.hpp"
#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "gemm/gemm.hpp"
#include "gemv/gemv.hpp"
#include "kv_cache/kv_cache.hpp"
#include "layernorm/layernorm.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;

Check run_and_check(const std::string& kernel, const std::string& dtype, const Params& params) {
  const KernelFamily& k = find_kernel(kernel);
  Problem p = make_problem(k, "cpu", "", dtype, params);
  auto inst = find_variant(k, "cpu", "").make(backend_for("cpu"), p);
  inst->launch();
  return inst->check();
}

struct Case {
  std::string kernel;
  Params params;
};

class EveryKernel : public ::testing::TestWithParam<std::tuple<Case, std::string>> {};

TEST_P(EveryKernel, MatchesFloat64Reference) {
  const auto& [c, dtype] = GetParam();
  Check r = run_and_check(c.kernel, dtype, c.params);
  EXPECT_TRUE(r.ok) << c.kernel << " " << dtype << " error " << r.max_rel_error << " > " << r.tolerance;
  EXPECT_LE(r.max_rel_error, dtype == "fp16" ? 4e-3 : 1e-4);
}

const Case kCases[] = {
    {"stream_copy", {{"n", "100003"}}},
    {"stream_scale", {{"n", "100003"}}},
    {"stream_add", {{"n", "77777"}}},
    {"stream_triad", {{"n", "131073"}}},
    {"stream_dot", {{"n", "262147"}}},
    {"gemm", {{"M", "1"}, {"N", "37"}, {"K", "129"}}},
    {"gemm", {{"M", "19"}, {"N", "301"}, {"K", "67"}, {"bias", "true"}, {"act", "gelu"}}},
    {"gemm", {{"M", "9"}, {"N", "260"}, {"K", "33"}, {"bias", "true"}, {"act", "silu"}}},
    {"gemm", {{"M", "17"}, {"N", "257"}, {"K", "5"}, {"act", "relu"}}},
    {"attention", {{"heads", "4"}, {"kv_heads", "2"}, {"seq_q", "1"}, {"seq_kv", "77"}, {"head_dim", "64"}}},
    {"attention", {{"batch", "2"}, {"heads", "6"}, {"kv_heads", "3"}, {"seq_q", "33"}, {"head_dim", "32"}, {"causal", "true"}}},
    {"attention", {{"heads", "3"}, {"seq_q", "5"}, {"seq_kv", "21"}, {"head_dim", "16"}, {"causal", "true"}}},
    {"qkv_projection", {{"tokens", "7"}, {"hidden", "33"}}},
    {"qkv_projection", {{"tokens", "16"}, {"hidden", "64"}}},
    {"kv_cache_append", {{"batch", "3"}, {"kv_heads", "2"}, {"head_dim", "64"}, {"max_seq", "100"}, {"new_tokens", "7"}}},
    {"q4_0_dequant", {{"rows", "13"}, {"cols", "96"}}},
    {"q4_0_matmul", {{"M", "1"}, {"N", "37"}, {"K", "160"}}},
    {"q4_0_matmul", {{"M", "11"}, {"N", "19"}, {"K", "64"}}},
    {"layernorm", {{"rows", "7"}, {"cols", "769"}}},
    {"bias_act", {{"rows", "5"}, {"cols", "333"}, {"act", "relu"}}},
    {"bias_act", {{"rows", "5"}, {"cols", "333"}, {"act", "gelu"}}},
    {"bias_act", {{"rows", "5"}, {"cols", "333"}, {"act", "silu"}}},
    {"intensity_sweep", {{"n", "1001"}, {"fmas", "1"}}},
    {"intensity_sweep", {{"n", "4099"}, {"fmas", "37"}}},
    {"fill", {{"n", "100003"}}},
};

std::string case_name(const ::testing::TestParamInfo<EveryKernel::ParamType>& info) {
  std::string name = std::get<0>(info.param).kernel + "_" + std::get<1>(info.param) + "_" + std::to_string(info.index);
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cpu, EveryKernel,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values("fp32", "fp16")), case_name);

}  // namespace

// The GPU GEMV's shape by row length (gemv_gpu_shape, used by gemv/gpu.hip); K in elements.
TEST(GemvGpuShape, FollowsTheRowLength) {
  auto is = [](GemvGpuShape s, int tpr, int loads, int block) {
    return s.tpr == tpr && s.loads == loads && s.block == block;
  };
  // FP16 (8 a vector): 4096 = 512 vectors: 128 threads x 4 loads, one row a block of 128.
  EXPECT_TRUE(is(gemv_gpu_shape(4096, 2, 32), 128, 4, 128));
  // 2048 and 1024: 64 and 32 threads a row, 2 and 4 rows a block of 128.
  EXPECT_TRUE(is(gemv_gpu_shape(2048, 2, 32), 64, 4, 128));
  EXPECT_TRUE(is(gemv_gpu_shape(1024, 2, 32), 32, 4, 128));
  // Past 512 vectors, 8 loads: 8192 -> 128 x 8; 14336 (1792 vectors) -> 256 x 8 in blocks of 256.
  EXPECT_TRUE(is(gemv_gpu_shape(8192, 2, 32), 128, 8, 128));
  EXPECT_TRUE(is(gemv_gpu_shape(14336, 2, 32), 256, 8, 256));
  EXPECT_TRUE(is(gemv_gpu_shape(4096 + 8, 2, 32), 128, 8, 128));
  // FP32 keeps 2 loads in blocks of 256: 4096 = 1024 vectors -> 256 x 2; 1024 -> 128 x 2, two rows a block.
  EXPECT_TRUE(is(gemv_gpu_shape(4096, 4, 32), 256, 2, 256));
  EXPECT_TRUE(is(gemv_gpu_shape(1024, 4, 32), 128, 2, 256));
  // Rows no multiple of a vector are read element by element: the same, a thread an element.
  EXPECT_TRUE(is(gemv_gpu_shape(4100, 2, 32), 256, 2, 256));
  EXPECT_TRUE(is(gemv_gpu_shape(77, 2, 32), 128, 2, 256));
  // Short rows keep a warp; AMD's 64-wide wavefronts keep 64.
  EXPECT_TRUE(is(gemv_gpu_shape(64, 2, 32), 32, 4, 128));
  EXPECT_TRUE(is(gemv_gpu_shape(64, 2, 64), 64, 4, 128));
  // Every answer is one of the shapes gpu.hip instantiates: 2 loads in blocks of 256; 4 or 8 in
  // blocks of 128, or 8 in a row's 256.
  for (int es : {2, 4})
    for (int warp : {32, 64})
      for (std::int64_t K = 1; K <= 40000; K += K < 600 ? 1 : 37) {
        const GemvGpuShape s = gemv_gpu_shape(K, es, warp);
        EXPECT_TRUE((s.loads == 2 && s.block == 256) || (s.loads == 4 && s.block == 128 && s.tpr <= 128) ||
                    (s.loads == 8 && (s.block == 128 || (s.block == 256 && s.tpr == 256))))
            << K << " " << es << " " << warp << ": " << s.tpr << " " << s.loads << " " << s.block;
      }
}

TEST(Reference, GemmSmallHandExample) {
  // [1 2; 3 4] . [5 6; 7 8] = [19 22; 43 50]: the kernel and the gold agree on a hand value.
  const KernelFamily& k = find_kernel("gemm");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"M", "2"}, {"N", "2"}, {"K", "2"}});
  GemmData d = make_gemm_data(p);
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  for (int i = 0; i < 4; ++i) d.A.set(i, a[i]), d.B.set(i, b[i]);
  gemm_cpu(d, p);
  EXPECT_FLOAT_EQ(d.C.get(0), 19);
  EXPECT_FLOAT_EQ(d.C.get(1), 22);
  EXPECT_FLOAT_EQ(d.C.get(2), 43);
  EXPECT_FLOAT_EQ(d.C.get(3), 50);
  EXPECT_TRUE(gemm_check(d, p).ok);
  d.C.set(3, 50.5f);  // a wrong output must fail the check
  EXPECT_FALSE(gemm_check(d, p).ok);
}

// An activation's output is judged by what an error in its pre-activation z can do: one output in
// GELU's tail (M = N = 1, K = 75: z about -4.7, y about 1e-6) passes when z is right to the dtype's
// rounding, and still fails when it is wrong.
TEST(Reference, GemmActivationTailIsJudgedThroughThePreActivation) {
  const KernelFamily& k = find_kernel("gemm");
  auto z_of = [](const GemmData& d, std::int64_t K) {
    double z = 0;
    for (std::int64_t i = 0; i < K; ++i) z += double(d.A.get(i)) * d.B.get(i);
    return z;
  };
  for (const char* dtype : {"fp16", "bf16", "fp32"}) {
    SCOPED_TRACE(dtype);
    Problem p = make_problem(k, "cpu", "", dtype, {{"M", "1"}, {"N", "1"}, {"K", "75"}, {"act", "gelu"}, {"bias", "0"}});
    GemmData d = make_gemm_data(p);
    const double z = z_of(d, 75), y = act_gold(Act::kGelu, z);
    ASSERT_LT(z, -3.0);  // the case the rule is for: a tail output, tiny against z
    ASSERT_LT(std::fabs(y), 1e-2);
    d.C.set(0, float(y));  // right, rounded to the dtype
    EXPECT_TRUE(gemm_check(d, p).ok);
    // z rounded to the dtype first (the unfused path stores A.B, then applies GELU).
    HostTensor zt(p.dtype, 1, "z");
    zt.set(0, float(z));
    d.C.set(0, act_f(Act::kGelu, zt.get(0)));
    EXPECT_TRUE(gemm_check(d, p).ok) << gemm_check(d, p).max_rel_error;
    // Wrong: the tail flushed to zero (what the tanh form does in FP32), or the output 5x off.
    d.C.set(0, 0.0f);
    EXPECT_FALSE(gemm_check(d, p).ok);
    d.C.set(0, float(5 * y));
    EXPECT_FALSE(gemm_check(d, p).ok);
    // The vendor's tanh-form GELU is allowed its documented distance from the erf form, no more.
    d.C.set(0, 0.0f);
    EXPECT_TRUE(gemm_check(d, p, 1e-4, kTanhGeluBound).ok);
    d.C.set(0, float(y + 2 * kTanhGeluBound));
    EXPECT_FALSE(gemm_check(d, p, 1e-4, kTanhGeluBound).ok);
  }
  // A normal-size output 1e-2 (FP32: 1e-3) off still fails, with and without the activation.
  for (const char* act : {"none", "gelu", "silu", "relu"})
    for (const char* dtype : {"fp16", "fp32"}) {
      SCOPED_TRACE(std::string(act) + " " + dtype);
      Problem p = make_problem(k, "cpu", "", dtype, {{"M", "20"}, {"N", "24"}, {"K", "64"}, {"act", act}, {"bias", "1"}});
      GemmData d = make_gemm_data(p);
      gemm_cpu(d, p);
      EXPECT_TRUE(gemm_check(d, p).ok);
      std::size_t big = 0;
      for (std::size_t i = 0; i < d.C.size(); ++i)
        if (std::fabs(d.C.get(i)) > std::fabs(d.C.get(big))) big = i;
      const double rel = std::string(dtype) == "fp32" ? 1e-3 : 1e-2;
      d.C.set(big, float(d.C.get(big) * (1 + rel)));
      EXPECT_FALSE(gemm_check(d, p).ok) << gemm_check(d, p).max_rel_error;
    }
}

TEST(Reference, AttentionWithOneKeyReturnsV) {
  const KernelFamily& k = find_kernel("attention");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"heads", "2"}, {"seq_q", "1"}, {"seq_kv", "1"}, {"head_dim", "8"}});
  AttentionData d = make_attention_data(p);
  attention_cpu(d, p);
  for (std::size_t i = 0; i < d.O.size(); ++i) EXPECT_FLOAT_EQ(d.O.get(i), d.V.get(i));
}

TEST(Reference, PagedAttentionReadsThroughTheBlockTable) {
  // The paged CPU variant computes the same function over a cache scattered into shuffled blocks:
  // its output checks against the float64 gold, and a wrong element fails the check.
  const KernelFamily& k = find_kernel("attention");
  for (const char* bs : {"1", "5", "16", "64"}) {
    Problem p = make_problem(k, "cpu", "paged", "fp32",
                             {{"batch", "2"}, {"heads", "4"}, {"kv_heads", "2"}, {"seq_q", "3"}, {"seq_kv", "37"},
                              {"head_dim", "8"}, {"causal", "true"}, {"block_size", bs}});
    AttentionData d = make_attention_data(p);
    ASSERT_TRUE(d.paged);
    EXPECT_EQ(d.blocks_per_seq, (37 + std::stoi(bs) - 1) / std::stoi(bs));
    EXPECT_EQ(d.K.size(), static_cast<std::size_t>(2 * d.blocks_per_seq * 2 * std::stoi(bs) * 8));
    attention_cpu(d, p);
    Check c = attention_check(d, p);
    EXPECT_TRUE(c.ok) << "block_size " << bs << " error " << c.max_rel_error;
    d.O.set(5, d.O.get(5) + 0.5f);
    EXPECT_FALSE(attention_check(d, p).ok);
  }
  // The table is a permutation of the blocks, so no two positions share storage.
  Problem p = make_problem(k, "cpu", "paged", "fp16", {{"batch", "3"}, {"heads", "1"}, {"seq_q", "1"},
                                                        {"seq_kv", "50"}, {"head_dim", "4"}, {"block_size", "8"}});
  AttentionData d = make_attention_data(p);
  std::vector<std::int32_t> sorted = d.block_table;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<std::int32_t>(i));
}

TEST(Reference, RisingAttentionScoresPassTheLazyReferenceAtNearlyEveryKeyTile) {
  // scores=rising is the worst case of the Hopper kernel's lazy rescale (the reference moves only when a
  // row's maximum passes it by more than 8 in log2 units): each tile of 64 keys must raise every row's
  // maximum by more than that, contiguous or paged, FP16 or BF16, while the rise stays under its cap.
  const KernelFamily& k = find_kernel("attention");
  for (const char* dt : {"fp16", "bf16"})
    for (const char* dim : {"32", "64", "128", "256"})
      for (const char* variant : {"", "paged"}) {
        Problem p = make_problem(k, "cpu", variant, dt,
                                 {{"heads", "2"}, {"kv_heads", "1"}, {"seq_q", "3"}, {"seq_kv", "2048"},
                                  {"head_dim", dim}, {"block_size", "16"}, {"scores", "rising"}});
        AttentionData d = make_attention_data(p);
        const AttentionDims a(p);
        const double log2_scale = 1.4426950408889634 / std::sqrt(static_cast<double>(a.D));
        int tiles = 0, passed = 0;
        for (std::int64_t h = 0; h < a.H; ++h)
          for (std::int64_t i = 0; i < a.Sq; ++i) {
            double ref = -INFINITY;
            for (std::int64_t t = 0; t < a.Skv / 64; ++t) {
              double mx = -INFINITY;
              for (std::int64_t j = 64 * t; j < 64 * t + 64; ++j) {
                double acc = 0;
                const std::size_t kr = attention_kv_offset(d, a, 0, 0, j);
                for (std::int64_t x = 0; x < a.D; ++x) acc += double(d.Q.get((h * a.Sq + i) * a.D + x)) * d.K.get(kr + x);
                mx = std::max(mx, acc * log2_scale);
              }
              if (t > 0) {
                ++tiles;
                passed += mx > ref + 8.0;
              }
              ref = std::max(ref, mx);
            }
          }
        EXPECT_GE(passed, tiles * 95 / 100) << dt << " D" << dim << " " << variant << ": " << passed << " of " << tiles;
      }
  // The default inputs stay uniform in [-1, 1): no rise.
  Problem p = make_problem(k, "cpu", "", "fp32", {{"heads", "1"}, {"seq_q", "1"}, {"seq_kv", "512"}, {"head_dim", "8"}});
  AttentionData d = make_attention_data(p);
  for (std::size_t i = 0; i < d.K.size(); ++i) ASSERT_LT(std::fabs(d.K.get(i)), 1.0f);
}

TEST(Reference, QkvProjectionIsTheGemmOverConcatenatedWeights) {
  const KernelFamily& k = find_kernel("qkv_projection");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"tokens", "1"}, {"hidden", "1"}});
  QkvData d = make_qkv_data(p);
  d.X.set(0, 2.0f);
  d.W.set(0, 3.0f), d.W.set(1, -1.0f), d.W.set(2, 0.5f);
  qkv_cpu(d, p);
  EXPECT_FLOAT_EQ(d.Y.get(0), 6.0f);
  EXPECT_FLOAT_EQ(d.Y.get(1), -2.0f);
  EXPECT_FLOAT_EQ(d.Y.get(2), 1.0f);
  EXPECT_TRUE(qkv_check(d, p).ok);
  Traffic t = k.traffic(make_problem(k, "cpu", "", "fp16", {{"tokens", "4096"}, {"hidden", "768"}}));
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 4096 * 3 * 768 * 768);
  EXPECT_DOUBLE_EQ(t.bytes_read, (4096.0 * 768 + 3.0 * 768 * 768) * 2);
  EXPECT_DOUBLE_EQ(t.bytes_written, 3.0 * 4096 * 768 * 2);
}

TEST(Reference, LayerNormOfAKnownRow) {
  const KernelFamily& k = find_kernel("layernorm");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"rows", "1"}, {"cols", "4"}});
  LayerNormData d = make_layernorm_data(p);
  const float x[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) d.x.set(i, x[i]), d.weight.set(i, 1.0f), d.bias.set(i, 0.0f);
  layernorm_cpu(d, p);
  // mean 2.5, variance 1.25: (x - 2.5) / sqrt(1.25 + 1e-5)
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(d.y.get(i), (x[i] - 2.5) / std::sqrt(1.25 + 1e-5), 1e-6);
}

TEST(Reference, CheckCatchesAWrongCopy) {
  const KernelFamily& k = find_kernel("kv_cache_append");
  Problem p = make_problem(k, "cpu", "", "fp32",
                           {{"kv_heads", "1"}, {"head_dim", "4"}, {"max_seq", "8"}, {"new_tokens", "2"}});
  KvAppendData d = make_kv_append_data(p);
  kv_append_cpu(d, p);
  EXPECT_TRUE(kv_append_check(d, p).ok);
  d.k_cache.set(d.positions[0] * 4 + 1, 123.0f);
  EXPECT_FALSE(kv_append_check(d, p).ok);
}

TEST(Reference, FillChecksEveryElementAgainstThePoison) {
  // The buffer starts poisoned, so a fill that never ran, or missed one element, fails.
  const KernelFamily& k = find_kernel("fill");
  for (const char* dtype : {"fp32", "fp16"}) {
    Problem p = make_problem(k, "cpu", "", dtype, {{"n", "1001"}});
    auto inst = find_variant(k, "cpu", "").make(backend_for("cpu"), p);
    EXPECT_FALSE(inst->check().ok) << dtype << ": the poisoned buffer passed";
    inst->launch();
    EXPECT_TRUE(inst->check().ok) << dtype;
    FillData d = make_fill_data(p);
    for (std::size_t i = 0; i < d.y.size(); ++i) d.y.set(i, kFillValue);
    EXPECT_TRUE(fill_check(d, p).ok);
    d.y.set(1000, kFillPoison);  // the last element missed
    EXPECT_FALSE(fill_check(d, p).ok) << dtype;
  }
  Traffic t = k.traffic(make_problem(k, "cpu", "", "fp16", {{"n", "1000"}}));
  EXPECT_EQ(t.bytes_read, 0);
  EXPECT_EQ(t.bytes_written, 2000);
  EXPECT_EQ(t.flops, 0);
}

TEST(Reference, FmaChainsCountTheirFlopsAndFailWhenNotRun) {
  const KernelFamily& k = find_kernel("fma_chain");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"workers", "2"}, {"iters", "100"}});
  EXPECT_DOUBLE_EQ(k.traffic(p).flops, 2.0 * 128 * 100 * 2);  // 128 chains a thread, 2 FLOPs an FMA
  auto inst = find_variant(k, "cpu", "").make(backend_for("cpu"), p);
  EXPECT_FALSE(inst->check().ok);  // nothing computed yet
  inst->launch();
  EXPECT_TRUE(inst->check().ok);
  Problem few = make_problem(k, "cpu", "", "fp32", {{"workers", "3"}, {"iters", "5"}});  // not yet at the fixed point
  auto inst5 = find_variant(k, "cpu", "").make(backend_for("cpu"), few);
  inst5->launch();
  EXPECT_TRUE(inst5->check().ok);
  EXPECT_THROW(make_problem(k, "cpu", "", "fp16", {}), InvalidArgument);  // the CPU's chains are FP32
}

TEST(Registry, BadParametersAreInvalidArguments) {
  const KernelFamily& g = find_kernel("gemm");
  EXPECT_THROW(find_kernel("nope"), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"M", "0"}, {"N", "1"}, {"K", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"M", "-3"}, {"N", "1"}, {"K", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"M", "x"}, {"N", "1"}, {"K", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"N", "1"}, {"K", "1"}}), InvalidArgument);  // M missing
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"M", "1"}, {"N", "1"}, {"K", "1"}, {"Q", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "bf8", {{"M", "1"}, {"N", "1"}, {"K", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "nope", "fp32", {{"M", "1"}, {"N", "1"}, {"K", "1"}}), InvalidArgument);
  EXPECT_THROW(make_problem(g, "cpu", "", "fp32", {{"M", "4000000000"}, {"N", "4000000000"}, {"K", "1"}}),
               InvalidArgument);  // M*N overflows
  EXPECT_THROW(make_problem(find_kernel("q4_0_matmul"), "cpu", "", "fp32", {{"N", "8"}, {"K", "48"}}),
               InvalidArgument);  // K not a multiple of 32
  EXPECT_THROW(make_problem(find_kernel("attention"), "cpu", "", "fp32",
                            {{"heads", "6"}, {"kv_heads", "4"}, {"seq_q", "4"}, {"head_dim", "8"}}),
               InvalidArgument);  // heads not a multiple of kv_heads
}

TEST(Registry, TrafficFormulas) {
  const KernelFamily& g = find_kernel("gemm");
  Problem p = make_problem(g, "cpu", "", "fp16", {{"M", "128"}, {"N", "4864"}, {"K", "896"}});
  Traffic t = g.traffic(p);
  EXPECT_DOUBLE_EQ(t.bytes_read, (128.0 * 896 + 896.0 * 4864) * 2);
  EXPECT_DOUBLE_EQ(t.bytes_written, 128.0 * 4864 * 2);
  EXPECT_DOUBLE_EQ(t.flops, 2.0 * 128 * 4864 * 896);
  const KernelFamily& q = find_kernel("q4_0_dequant");
  Traffic tq = q.traffic(make_problem(q, "cpu", "", "fp16", {{"rows", "14336"}, {"cols", "4096"}}));
  EXPECT_DOUBLE_EQ(tq.bytes_read, 14336.0 * 4096 / 32 * 18);
  EXPECT_DOUBLE_EQ(tq.bytes_written, 14336.0 * 4096 * 2);
  const KernelFamily& a = find_kernel("attention");
  Traffic ta = a.traffic(make_problem(a, "cpu", "", "fp32", {{"heads", "1"}, {"seq_q", "4"}, {"head_dim", "2"}, {"causal", "1"}}));
  EXPECT_DOUBLE_EQ(ta.flops, 4.0 * 2 * (1 + 2 + 3 + 4));  // causal: 10 visible (query, key) pairs
}

TEST(Runner, RepeatsUntilCountAndTime) {
  RunOptions opt;
  opt.cold = false;
  opt.warmup = 1;
  opt.min_repeats = 7;
  opt.min_time_s = 0;
  opt.verify = false;
  const KernelFamily& k = find_kernel("stream_copy");
  Problem p = make_problem(k, "cpu", "", "fp32", {{"n", "1000"}});
  auto inst = find_variant(k, "cpu", "").make(backend_for("cpu"), p);
  auto times = run_repeats(backend_for("cpu"), *inst, opt);
  EXPECT_EQ(times.size(), 7u);
  opt.min_time_s = 0.01;  // now the minimum time decides: many more than 7 runs of a tiny copy
  opt.max_repeats = 100000000;
  opt.max_time_s = 60;
  times = run_repeats(backend_for("cpu"), *inst, opt);
  double total = 0;
  for (double t : times) total += t;
  EXPECT_GE(total, 0.01e6);
  EXPECT_GT(times.size(), 7u);
}

TEST(Measure, CpuRowIsComplete) {
  RunOptions opt;
  opt.min_repeats = 3;
  opt.min_time_s = 0.001;
  Measurement m = measure("stream_triad", "fp32", "cpu", "", {{"n", "1048576"}}, opt);
  EXPECT_TRUE(m.verified);
  EXPECT_EQ(m.backend, "cpu");
  EXPECT_EQ(m.cache, "cold");
  EXPECT_DOUBLE_EQ(m.bytes_read, 2.0 * 1048576 * 4);
  EXPECT_GT(m.bandwidth_gbs, 0);
  EXPECT_GT(m.peaks.bandwidth_gbs, 0);
  EXPECT_EQ(m.peaks.bandwidth_source.rfind("measured:", 0), 0u);
  EXPECT_NEAR(m.bandwidth_gbs, (m.bytes_read + m.bytes_written) / (m.time_us.median * 1e-6) / 1e9, 1e-9);
}
