"""BF16 as a dtype of every family on the CPU: each kernel at odd sizes against the float64
reference, the bytes it declares (2 per element), random shapes for the reductions (GEMM,
attention), the tolerance the checks use, and bad dtypes."""
import math

import pytest
from hypothesis import given, settings, strategies as st

import bwprof
from bwprof import _core

Q = dict(repeats=1, min_time_s=0.0, warmup=0)

CASES = [
    ("stream_copy", None, dict(n=1001)),
    ("stream_triad", None, dict(n=4099)),
    ("stream_dot", None, dict(n=3001)),
    ("fill", None, dict(n=777)),
    ("intensity_sweep", None, dict(n=999, fmas=7)),
    ("gemm", None, dict(M=7, N=33, K=65, bias=True, act="gelu")),
    ("qkv_projection", None, dict(tokens=5, hidden=24)),
    ("gemv", None, dict(N=37, K=129)),
    ("layernorm", None, dict(rows=5, cols=333)),
    ("bias_act", None, dict(rows=3, cols=257, act="silu")),
    ("kv_cache_append", "contiguous", dict(batch=3, kv_heads=2, max_seq=40, new_tokens=5, head_dim=24)),
    ("kv_cache_append", "paged", dict(batch=3, kv_heads=2, max_seq=40, new_tokens=5, head_dim=24)),
    ("q4_0_dequant", None, dict(rows=3, cols=96)),
    ("q4_0_matmul", None, dict(M=3, N=17, K=96)),
    ("attention", None, dict(batch=3, heads=6, kv_heads=2, seq_q=7, seq_kv=19, head_dim=80, causal=True)),
    ("attention", "paged", dict(batch=2, heads=7, kv_heads=1, seq_q=1, seq_kv=45, head_dim=96, block_size=5)),
]


def _kernel(name):
    return next(k for k in _core.kernels() if k["name"] == name)


@pytest.mark.parametrize("kernel,variant,params", CASES, ids=lambda x: x if isinstance(x, str) else None)
def test_every_family_takes_bf16_on_the_cpu(kernel, variant, params):
    assert "bf16" in _kernel(kernel)["dtypes"]
    kw = dict(params, **Q)
    if variant:
        kw["variant"] = variant
    d = bwprof.measure(kernel, dtype="bf16", device="cpu", **kw).to_dict()
    assert d["dtype"] == "bf16"
    assert d["verified"], (kernel, d["max_rel_error"], d["tolerance"])
    f32 = bwprof.measure(kernel, dtype="fp32", device="cpu", **kw).to_dict()
    # 2 bytes an element where FP32 has 4 (the dot product writes one FP32 sum; Q4_0's packed
    # weights are the same in both, so the outputs tell)
    which = "bytes_read" if kernel == "stream_dot" else "bytes_written"
    assert d[which] * 2 == pytest.approx(f32[which])
    assert d["flops"] == f32["flops"]


def test_bf16_is_not_fp16_storage():
    # 1 + 2^-9 is a half (10 fraction bits) but not a bfloat16 (7): BF16 output is rounded further.
    h = bwprof.measure("gemm", dtype="fp16", device="cpu", M=16, N=64, K=512, **Q).to_dict()
    b = bwprof.measure("gemm", dtype="bf16", device="cpu", M=16, N=64, K=512, **Q).to_dict()
    assert h["verified"] and b["verified"]
    assert b["max_rel_error"] > 2 * h["max_rel_error"]  # 2^-8 against 2^-11 unit roundoff
    assert b["max_rel_error"] < b["tolerance"]


def test_the_bf16_tolerance_grows_with_the_reduction_length():
    u = 2.0 ** -8
    short = bwprof.measure("bias_act", dtype="bf16", device="cpu", rows=2, cols=64, **Q).to_dict()
    assert short["tolerance"] == pytest.approx(u * (4 + 1 / 16))
    long = bwprof.measure("gemm", dtype="bf16", device="cpu", M=2, N=8, K=4096, **Q).to_dict()
    assert long["tolerance"] == pytest.approx(u * (4 + math.sqrt(4096) / 16))  # 8u at 4K
    assert bwprof.measure("gemm", dtype="fp16", device="cpu", M=2, N=8, K=4096, **Q).to_dict()["tolerance"] == 4e-3


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 70), k=st.integers(1, 300), bias=st.booleans(),
       act=st.sampled_from(["none", "relu", "gelu", "silu"]))
def test_gemm_bf16_random_shapes(m, n, k, bias, act):
    d = bwprof.measure("gemm", dtype="bf16", device="cpu", M=m, N=n, K=k, bias=bias, act=act, **Q).to_dict()
    assert d["verified"], (m, n, k, d["max_rel_error"])


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.integers(1, 8), seq_q=st.integers(1, 40),
       extra=st.integers(0, 60), head_dim=st.sampled_from([32, 64, 80, 96, 128, 256]), causal=st.booleans(),
       paged=st.booleans(), block=st.integers(1, 17))
def test_attention_bf16_random_shapes(batch, kv_heads, group, seq_q, extra, head_dim, causal, paged, block):
    kw = dict(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, seq_q=seq_q, seq_kv=seq_q + extra,
              head_dim=head_dim, causal=causal, **Q)
    if paged:
        kw.update(variant="paged", block_size=block)
    d = bwprof.measure("attention", dtype="bf16", device="cpu", **kw).to_dict()
    assert d["verified"], (kw, d["max_rel_error"])


@pytest.mark.parametrize("bad", ["bf8", "bfloat", "BF16", ""])
def test_unknown_dtypes_name_the_known_ones(bad):
    with pytest.raises(ValueError, match="dtype.*fp32, fp16, bf16"):
        bwprof.measure("gemm", dtype=bad, device="cpu", M=2, N=2, K=2, **Q)


def test_fma_chain_has_no_bf16_on_the_cpu():
    # Packed BF16 chains exist on the GPU alone (NVIDIA sm_80+, issue #45); the CPU's chains are FP32.
    k = _kernel("fma_chain")
    assert "bf16" in k["dtypes"]
    assert [v["dtypes"] for v in k["variants"] if v["backend"] == "cpu"] == [["fp32"]]
    with pytest.raises(ValueError, match="bf16"):
        bwprof.measure("fma_chain", dtype="bf16", device="cpu", **Q)


def test_bf16_peaks_take_fp32s_vector_roof():
    # no BF16 FMA chain: the kernels convert to FP32, so FP32's measured roof is BF16's
    p16, p32 = bwprof.peaks("cpu", "bf16"), bwprof.peaks("cpu", "fp32")
    assert p16["gflops"] == p32["gflops"] and p16["compute_source"] == p32["compute_source"]
    assert p16["bandwidth_gbs"] == p32["bandwidth_gbs"]
