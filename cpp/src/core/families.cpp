// The one place where every kernel family declares its parameters and its minimal traffic:
// each input read once, each output written once, FLOPs counted as multiply-adds x 2.
#include <algorithm>
#include <map>
#include <cmath>

#include "bwprof/error.hpp"
#include "bwprof/kernel.hpp"
#include "cpu/cpu_kernels.hpp"
#ifdef BWPROF_WITH_GPU
#include "gpu_kernels.hpp"
#endif

namespace bwprof {

namespace {

using K = ParamSpec::Kind;
const std::vector<DType> kBoth = {DType::kF32, DType::kF16};

ParamSpec int_param(const char* name, const char* def, const char* help, std::int64_t min = 1) {
  ParamSpec p;
  p.name = name;
  p.default_value = def;
  p.help = help;
  p.min = min;
  return p;
}
ParamSpec bool_param(const char* name, const char* def, const char* help) {
  ParamSpec p = int_param(name, def, help);
  p.kind = K::kBool;
  return p;
}
ParamSpec choice_param(const char* name, const char* def, std::vector<std::string> choices, const char* help) {
  ParamSpec p = int_param(name, def, help);
  p.kind = K::kChoice;
  p.choices = std::move(choices);
  return p;
}

double es(const Problem& p) { return static_cast<double>(dtype_size(p.dtype)); }

// Elements of a product of parameters, checked for overflow (the allocation size later).
std::int64_t count(const Problem& p, std::initializer_list<const char*> names) {
  std::int64_t n = 1;
  std::string what;
  for (const char* name : names) {
    what += (what.empty() ? "" : "*") + std::string(name);
    n = checked_mul(n, p.i(name), what.c_str());
  }
  checked_mul(n, 4, what.c_str());  // bytes of an FP32 tensor of that size
  return n;
}

void add_cpu(KernelFamily& k, Factory f) { k.variants.push_back({"cpu", "cpu", std::move(f), {}}); }

#ifdef BWPROF_WITH_GPU
void add_gpu(KernelFamily& k, const char* name, Factory f) { k.variants.push_back({name, "gpu", std::move(f), {}}); }
#else
// Without a GPU compiler the GPU factories do not exist; the variant is simply absent.
#define add_gpu(k, name, f) ((void)0)
#endif

KernelFamily stream_kernel(const char* op, int reads, int writes, int flops_per_elem, const char* doc) {
  KernelFamily k;
  k.name = std::string("stream_") + op;
  k.family = "stream";
  k.doc = doc;
  k.params = {int_param("n", "16777216", "elements per array")};
  k.dtypes = kBoth;
  k.traffic = [=](const Problem& p) {
    double n = static_cast<double>(count(p, {"n"}));
    return Traffic{reads * n * es(p), writes * n * es(p), flops_per_elem * n};
  };
  add_cpu(k, make_stream_cpu);
  add_gpu(k, "gpu", make_stream_gpu);
  return k;
}

std::vector<KernelFamily> build() {
  std::vector<KernelFamily> r;
  r.push_back(stream_kernel("copy", 1, 1, 0, "c[i] = a[i]"));
  r.push_back(stream_kernel("scale", 1, 1, 1, "b[i] = s * c[i]"));
  r.push_back(stream_kernel("add", 2, 1, 1, "c[i] = a[i] + b[i]"));
  r.push_back(stream_kernel("triad", 2, 1, 2, "a[i] = b[i] + s * c[i]"));
  {
    // The dot product's single output is negligible; it is still one written element.
    KernelFamily k = stream_kernel("dot", 2, 0, 2, "sum(a[i] * b[i]) with FP32 accumulation");
    auto t = k.traffic;
    k.traffic = [t](const Problem& p) { Traffic x = t(p); x.bytes_written = 4; return x; };
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = k.family = "gemm";
    k.doc = "C[M,N] = act(A[M,K] . B[K,N] + bias[N]), row-major, FP32 accumulation";
    k.params = {int_param("M", "", "rows of A and C"), int_param("N", "", "columns of B and C"),
                int_param("K", "", "inner dimension"), bool_param("bias", "false", "add a bias row"),
                choice_param("act", "none", {"none", "relu", "gelu", "silu"}, "activation after the bias")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) { count(p, {"M", "K"}); count(p, {"K", "N"}); count(p, {"M", "N"}); };
    k.traffic = [](const Problem& p) {
      double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
      double bias = p.b("bias") ? N : 0;
      return Traffic{(M * Kd + Kd * N + bias) * es(p), M * N * es(p),
                     2 * M * N * Kd + (p.b("bias") ? M * N : 0)};
    };
    add_cpu(k, make_gemm_cpu);
#ifdef BWPROF_WITH_VENDOR_BLAS
    add_gpu(k, "vendor", make_gemm_gpu);  // first: the GPU's default is the library
#endif
    add_gpu(k, "tiled", make_gemm_gpu);
#ifdef BWPROF_WITH_GPU
    k.variants.push_back({"tensor", "gpu", make_gemm_gpu, {DType::kF16}});  // FP16 on the matrix units
#endif
    add_gpu(k, "unfused", make_gemm_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "qkv_projection";
    k.family = "gemm";
    k.doc = "[Q|K|V][tokens, 3*hidden] = X[tokens, hidden] . [Wq|Wk|Wv]: one GEMM over the concatenated "
            "weights (fused) or three GEMMs (separate)";
    k.params = {int_param("tokens", "", "rows of X"), int_param("hidden", "", "model width (each of Q, K, V)")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) {
      count(p, {"tokens", "hidden"});
      checked_mul(count(p, {"hidden", "hidden"}), 12, "3*hidden*hidden");
      checked_mul(count(p, {"tokens", "hidden"}), 12, "3*tokens*hidden");
    };
    k.traffic = [](const Problem& p) {
      double T = p.i("tokens"), H = p.i("hidden");
      return Traffic{(T * H + 3 * H * H) * es(p), 3 * T * H * es(p), 2 * T * 3 * H * H};
    };
    k.variants.push_back({"fused", "cpu", make_qkv_cpu, {}});
    add_gpu(k, "fused", make_qkv_gpu);
    add_gpu(k, "separate", make_qkv_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "gemv";
    k.family = "gemm";
    k.doc = "y[N] = W[N,K] . x[K], W row-major (a linear layer at batch 1), FP32 accumulation";
    k.params = {int_param("N", "", "rows of W (outputs)"), int_param("K", "", "columns of W (inputs)"),
                int_param("rotate", "1",
                          "copies of W used in turn (GPU): with cache='hot', copies that together exceed the L2 "
                          "keep W out of it without a flush between runs")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) { count(p, {"N", "K"}); };
    k.traffic = [](const Problem& p) {
      double N = p.i("N"), Kd = p.i("K");
      return Traffic{(N * Kd + Kd) * es(p), N * es(p), 2 * N * Kd};
    };
    add_cpu(k, make_gemv_cpu);
    add_gpu(k, "gpu", make_gemv_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = k.family = "attention";
    k.doc = "O = softmax(Q.K^T / sqrt(d)) . V per head, optional causal mask, grouped-query KV heads";
    k.params = {int_param("batch", "1", "sequences"), int_param("heads", "", "query heads"),
                int_param("kv_heads", "0", "key/value heads (0: same as heads)", 0),
                int_param("seq_q", "", "query positions (1 for decode)"),
                int_param("seq_kv", "0", "key/value positions (0: same as seq_q)", 0),
                int_param("head_dim", "", "dimension of a head"),
                bool_param("causal", "false", "mask keys after each query's position"),
                int_param("block_size", "16", "positions per block of a paged KV cache (paged variants)")};
    k.dtypes = kBoth;
    k.resolve = [](Problem& p) {
      if (p.i("kv_heads") == 0) p.set("kv_heads", p.i("heads"));
      if (p.i("seq_kv") == 0) p.set("seq_kv", p.i("seq_q"));
    };
    k.validate = [](const Problem& p) {
      std::int64_t h = p.i("heads"), hkv = p.i("kv_heads") ? p.i("kv_heads") : h;
      std::int64_t sq = p.i("seq_q"), skv = p.i("seq_kv") ? p.i("seq_kv") : sq;
      if (h % hkv) BWPROF_INVALID("kv_heads: heads (" + std::to_string(h) + ") must be a multiple of kv_heads (" + std::to_string(hkv) + ")");
      if (p.b("causal") && sq > skv) BWPROF_INVALID("seq_q: a causal mask needs seq_q <= seq_kv");
      count(p, {"batch", "heads", "seq_q", "head_dim"});
      checked_mul(checked_mul(p.i("batch") * hkv, skv, "batch*kv_heads*seq_kv"), p.i("head_dim"), "K/V size");
    };
    k.traffic = [](const Problem& p) {
      double B = p.i("batch"), H = p.i("heads"), D = p.i("head_dim");
      double Hkv = p.i("kv_heads") ? p.i("kv_heads") : H;
      double Sq = p.i("seq_q"), Skv = p.i("seq_kv") ? p.i("seq_kv") : Sq;
      // Causal: query i (aligned to the end of the keys) sees Skv - Sq + i + 1 keys.
      double pairs = p.b("causal") ? Sq * (Skv - Sq) + Sq * (Sq + 1) / 2 : Sq * Skv;
      // A paged cache is also read through its block table.
      double table = p.variant.find("paged") != std::string::npos
                         ? 4.0 * B * std::ceil(Skv / double(p.i("block_size"))) : 0.0;
      return Traffic{(B * H * Sq * D + 2 * B * Hkv * Skv * D) * es(p) + table, B * H * Sq * D * es(p),
                     4 * B * H * D * pairs};
    };
    add_cpu(k, make_attention_cpu);
    k.variants.push_back({"paged", "cpu", make_attention_cpu, {}});
    add_gpu(k, "flash", make_attention_gpu);
    add_gpu(k, "flash_paged", make_attention_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "kv_cache_append";
    k.family = "kv_cache";
    k.doc = "write new K and V [batch, kv_heads, new_tokens, head_dim] into caches "
            "[batch, kv_heads, max_seq, head_dim] at each sequence's position";
    k.params = {int_param("batch", "1", "sequences"), int_param("kv_heads", "", "key/value heads"),
                int_param("head_dim", "", "dimension of a head"),
                int_param("max_seq", "", "cache capacity in positions"),
                int_param("new_tokens", "1", "positions appended per sequence"),
                int_param("block_size", "16", "positions per block of a paged cache")};
    k.dtypes = kBoth;
    k.pattern = AccessPattern::kStrided;
    k.validate = [](const Problem& p) {
      if (p.i("new_tokens") > p.i("max_seq")) BWPROF_INVALID("new_tokens: must not exceed max_seq");
      count(p, {"batch", "kv_heads", "max_seq", "head_dim"});
    };
    k.traffic = [](const Problem& p) {
      double n = double(p.i("batch")) * p.i("kv_heads") * p.i("new_tokens") * p.i("head_dim");
      // Positions, and for a paged cache the block-table entries the new tokens span.
      double index = 4.0 * p.i("batch");
      if (p.variant == "paged") index += 4.0 * p.i("batch") * (p.i("new_tokens") / p.i("block_size") + 1);
      return Traffic{2 * n * es(p) + index, 2 * n * es(p), 0};
    };
    k.variants.push_back({"contiguous", "cpu", make_kv_cache_append_cpu, {}});
    k.variants.push_back({"paged", "cpu", make_kv_cache_append_cpu, {}});
    add_gpu(k, "contiguous", make_kv_cache_append_gpu);
    add_gpu(k, "paged", make_kv_cache_append_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "q4_0_dequant";
    k.family = "q4_0";
    k.doc = "expand Q4_0 blocks (FP16 scale + 32 4-bit values) to FP32/FP16: (q - 8) * scale";
    k.params = {int_param("rows", "", "rows of the matrix"), int_param("cols", "", "columns (multiple of 32)")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) {
      if (p.i("cols") % 32) BWPROF_INVALID("cols: must be a multiple of 32 (the Q4_0 block), got " + std::to_string(p.i("cols")));
      count(p, {"rows", "cols"});
    };
    k.traffic = [](const Problem& p) {
      double n = double(p.i("rows")) * p.i("cols");
      return Traffic{n / 32 * 18, n * es(p), 2 * n};
    };
    add_cpu(k, make_q4_0_dequant_cpu);
    add_gpu(k, "gpu", make_q4_0_dequant_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "q4_0_matmul";
    k.family = "q4_0";
    k.doc = "Y[M,N] = X[M,K] . W[N,K]^T with W in Q4_0 rows, dequantized on the fly";
    k.params = {int_param("M", "1", "rows of X (tokens)"), int_param("N", "", "rows of W (outputs)"),
                int_param("K", "", "inner dimension (multiple of 32)")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) {
      if (p.i("K") % 32) BWPROF_INVALID("K: must be a multiple of 32 (the Q4_0 block), got " + std::to_string(p.i("K")));
      count(p, {"M", "K"}); count(p, {"N", "K"}); count(p, {"M", "N"});
    };
    k.traffic = [](const Problem& p) {
      double M = p.i("M"), N = p.i("N"), Kd = p.i("K");
      return Traffic{N * Kd / 32 * 18 + M * Kd * es(p), M * N * es(p), 2 * M * N * Kd};
    };
    add_cpu(k, make_q4_0_matmul_cpu);
    add_gpu(k, "llama", make_q4_0_matmul_gpu);
    add_gpu(k, "tiled", make_q4_0_matmul_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = k.family = "layernorm";
    k.doc = "y = (x - mean) / sqrt(var + 1e-5) * weight + bias over each row, FP32 statistics";
    k.params = {int_param("rows", "", "rows (tokens)"), int_param("cols", "", "normalized width")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) { count(p, {"rows", "cols"}); };
    k.traffic = [](const Problem& p) {
      double R = p.i("rows"), C = p.i("cols");
      // Per element: mean (1), variance (3), normalize, scale, shift (4).
      return Traffic{(R * C + 2 * C) * es(p), R * C * es(p), 8 * R * C};
    };
    add_cpu(k, make_layernorm_cpu);
    add_gpu(k, "gpu", make_layernorm_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "bias_act";
    k.family = "bias_act";
    k.doc = "y = act(x + bias[col]) in one pass";
    k.params = {int_param("rows", "", "rows (tokens)"), int_param("cols", "", "features"),
                choice_param("act", "gelu", {"relu", "gelu", "silu"}, "activation")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) { count(p, {"rows", "cols"}); };
    k.traffic = [](const Problem& p) {
      double R = p.i("rows"), C = p.i("cols");
      // The add and the activation, each counted as one operation.
      return Traffic{(R * C + C) * es(p), R * C * es(p), 2 * R * C};
    };
    k.variants.push_back({"fused", "cpu", make_bias_act_cpu, {}});
    add_gpu(k, "fused", make_bias_act_gpu);
    add_gpu(k, "unfused", make_bias_act_gpu);
    r.push_back(k);
  }
  {
    KernelFamily k;
    k.name = "intensity_sweep";
    k.family = "roofline";
    k.doc = "y = x after `fmas` dependent FMAs per element: sweeping fmas traces the empirical roofline";
    k.params = {int_param("n", "16777216", "elements"), int_param("fmas", "16", "FMAs per element (2 FLOPs each)")};
    k.dtypes = kBoth;
    k.validate = [](const Problem& p) { count(p, {"n"}); count(p, {"n", "fmas"}); };
    k.traffic = [](const Problem& p) {
      const double n = static_cast<double>(p.i("n"));
      return Traffic{n * es(p), n * es(p), 2.0 * n * p.i("fmas")};
    };
    add_cpu(k, make_intensity_sweep_cpu);
    add_gpu(k, "gpu", make_intensity_sweep_gpu);
    r.push_back(k);
  }
  // The GPU variants whose FP16 work runs on the matrix units.
  const std::map<std::string, std::vector<std::string>> matrix = {
      {"gemm", {"vendor", "tensor", "unfused"}}, {"qkv_projection", {"fused", "separate"}},
      {"attention", {"flash", "flash_paged"}}, {"q4_0_matmul", {"tiled"}}};
  for (auto& k : r) {
    auto it = matrix.find(k.name);
    if (it == matrix.end()) continue;
    for (auto& v : k.variants)
      if (v.backend == "gpu" && std::find(it->second.begin(), it->second.end(), v.name) != it->second.end())
        v.matrix_units = true;
  }
  return r;
}

}  // namespace

const std::vector<KernelFamily>& kernel_registry() {
  static const std::vector<KernelFamily> registry = build();
  return registry;
}

}  // namespace bwprof
