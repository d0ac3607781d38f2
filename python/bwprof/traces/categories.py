"""Kernel categories from kernel names: an ordered (regex -> category) rule table.

The first rule whose regex matches (``re.search``, case-insensitive) the full kernel name wins,
so specific rules come before general ones: bwprof's own kernels first, communication before
reduction (NCCL's AllReduce), quantization and attention before GEMM, fill before elementwise
(PyTorch's FillFunctor runs in its elementwise kernel).
"""

import re
from collections.abc import Iterable

import pandas as pd

GEMM = "GEMM"
ATTENTION = "attention"
NORMALIZATION = "normalization"
ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
MEMCPY = "memory copy"
FILL = "fill"
QUANTIZATION = "quantization"
KV_CACHE = "KV cache"
COMMUNICATION = "communication"
OTHER = "other"

CATEGORIES = (GEMM, ATTENTION, NORMALIZATION, ELEMENTWISE, REDUCTION, MEMCPY, FILL,
              QUANTIZATION, KV_CACHE, COMMUNICATION, OTHER)

DEFAULT_RULES = (
    # bwprof's own kernels, named bwprof_<family>_<what>.
    (r"\bbwprof_(gemm|gemv)", GEMM),
    (r"\bbwprof_(attention|flash)", ATTENTION),
    (r"\bbwprof_layernorm", NORMALIZATION),
    (r"\bbwprof_bias_act", ELEMENTWISE),
    (r"\bbwprof_kv_cache", KV_CACHE),
    (r"\bbwprof_q4_0", QUANTIZATION),
    (r"\bbwprof_stream_copy", MEMCPY),
    (r"\bbwprof_stream_(dot|read)", REDUCTION),
    (r"\bbwprof_stream", ELEMENTWISE),          # scale, add, triad
    # Collectives (NCCL/RCCL, custom all-reduce kernels).
    (r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|cross_device_reduce",
     COMMUNICATION),
    # KV cache writes and moves (vLLM, llama.cpp); paged attention itself is attention.
    (r"kv_?cache|reshape_and_cache|concat_and_cache|copy_blocks|swap_blocks|cache_kernel", KV_CACHE),
    # Quantize / dequantize and quantized matmuls (GGUF blocks, AWQ/GPTQ/Marlin, FP8 casts).
    (r"dequant|quantiz|\bquant_|_quant\b|q4_0|q4_k|q5_0|q5_k|q6_k|q8_0|q8_1|gguf|awq|gptq|marlin"
     r"|mul_mat_q|mul_mat_vec_q|scaled_fp8|fp8_quant", QUANTIZATION),
    # Attention (FlashAttention, CK/xformers fmha, SDPA, paged and decode attention).
    (r"flash|fmha|attention|attn|sdpa|scaled_dot_product|\bmha_|_mha\b|cutlassF|cutlassB", ATTENTION),
    # GEMM: rocBLAS/Tensile Cijk_, hipBLASLt, cuBLAS (sm90_xmma, nvjet, ampere_*gemm), CUTLASS,
    # Triton templates, generic names.
    (r"Cijk_|hipblaslt|rocblas.*gemm|gemm|gemv|matmul|xmma|nvjet|cutlass|s1688|h1688|s16816"
     r"|h16816|splitKreduce|wmma|mfma|triton_tem_fused|\bmm_kernel|bmm_kernel", GEMM),
    (r"layer_?norm|rms_?norm|batch_?norm|group_?norm|instance_?norm|_norm_kernel|norm_fwd|norm_bwd",
     NORMALIZATION),
    (r"softmax|reduce|reduction|argmax|argmin|topk|top_k|\bsum_kernel|cumsum|\bscan|triton_red_fused"
     r"|triton_per_fused", REDUCTION),
    (r"fill|memset|zero_?kernel|zeros", FILL),
    (r"memcpy|copybuffer|copy_?kernel|direct_copy|\bcopy|transpose|DtoD|HtoD|DtoH|concat|\bcat_"
     r"|index_select|gather|scatter", MEMCPY),
    (r"elementwise|pointwise|triton_poi_fused|bias|activation|gelu|silu|swiglu|relu|sigmoid|tanh"
     r"|rotary|rope|dropout|\bclamp|\b(add|addition|sub|subtract|mul|multiply|div|divide)_kernel"
     r"|unrolled|vectorized", ELEMENTWISE),
)


def compile_rules(rules=None, extra_rules=None):
    """Compiled (pattern, category) list: ``extra_rules`` first, then ``rules`` (default table).

    Rules may be a list of (regex, category) pairs or a {regex: category} dict; strings are
    compiled case-insensitively.
    """
    def as_pairs(r, name):
        if r is None:
            return []
        if isinstance(r, dict):
            return list(r.items())
        if isinstance(r, (str, bytes)) or not isinstance(r, Iterable):
            raise TypeError(f"{name}: expected a {{regex: category}} dict or a list of (regex, category) "
                            f"pairs, got {type(r).__name__} {r!r:.60}")
        pairs = list(r)
        for i, pair in enumerate(pairs):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{name}[{i}]: expected a (regex, category) pair, got {type(pair).__name__} "
                                f"{pair!r:.60}")
        return pairs

    base = DEFAULT_RULES if rules is None else rules
    out = []
    for pattern, category in as_pairs(extra_rules, "extra_rules") + as_pairs(base, "rules"):
        if not isinstance(pattern, (str, re.Pattern)):
            raise TypeError(f"category rule {pattern!r:.60}: the pattern must be a regex string or a "
                            f"compiled re.Pattern, not {type(pattern).__name__}")
        if isinstance(pattern, str):
            try:
                pattern = re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"category rule {pattern!r}: bad regular expression ({exc})") from None
        out.append((pattern, str(category)))
    return out


def category_of(name, rules=None, extra_rules=None):
    """The category of one kernel name ("other" when no rule matches)."""
    for pattern, category in compile_rules(rules, extra_rules):
        if pattern.search(str(name)):
            return category
    return OTHER


def categorize(df, rules=None, extra_rules=None):
    """A copy of ``df`` with a ``category`` column from its ``kernel_name`` column.

    Pass ``extra_rules`` to add rules that take precedence over the defaults, or ``rules``
    to replace the default table.
    """
    compiled = compile_rules(rules, extra_rules)
    cache = {}

    def one(name):
        if name not in cache:
            cache[name] = next((c for p, c in compiled if p.search(str(name))), OTHER)
        return cache[name]

    out = df.copy()
    out["category"] = pd.Series([one(n) for n in df["kernel_name"]], index=df.index, dtype="object")
    return out
