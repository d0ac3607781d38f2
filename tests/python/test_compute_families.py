"""The compute families on the CPU: the QKV projection and the paged attention reference, their
variants as the registry lists them, and bad input (these run everywhere, GPU or not)."""
import pytest

import bwprof
from bwprof import _core
from bwprof.suite import default_suite

Q = dict(repeats=2, min_time_s=0.0, warmup=1)


def _kernel(name):
    return next(k for k in _core.kernels() if k["name"] == name)


def test_qkv_projection_on_the_cpu_matches_the_reference_and_counts_its_flops():
    d = bwprof.measure("qkv_projection", device="cpu", tokens=9, hidden=40, **Q).to_dict()
    assert d["verified"] and d["family"] == "gemm"
    assert d["flops"] == 2 * 9 * 3 * 40 * 40
    assert d["bytes_read"] == (9 * 40 + 3 * 40 * 40) * 4 and d["bytes_written"] == 3 * 9 * 40 * 4


@pytest.mark.parametrize("block_size", [1, 5, 16])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_paged_attention_reference_on_the_cpu(block_size, dtype):
    d = bwprof.measure("attention", device="cpu", dtype=dtype, variant="paged", batch=2, heads=4, kv_heads=2,
                       seq_q=3, seq_kv=40, head_dim=16, causal=True, block_size=block_size, **Q).to_dict()
    assert d["verified"], d["max_rel_error"]
    # The block table (one int32 per block of each sequence) is part of what a paged read moves.
    plain = bwprof.measure("attention", device="cpu", dtype=dtype, batch=2, heads=4, kv_heads=2, seq_q=3,
                           seq_kv=40, head_dim=16, causal=True, **Q).to_dict()
    assert d["bytes_read"] - plain["bytes_read"] == 4 * 2 * -(-40 // block_size)


def test_variants_and_their_dtypes_are_listed():
    gemm = {v["name"]: v for v in _kernel("gemm")["variants"]}
    assert gemm["cpu"]["dtypes"] == ["fp32", "fp16", "bf16"]
    if "tensor" in gemm:  # builds with a GPU compiler
        assert gemm["tensor"]["dtypes"] == ["fp16", "bf16"]
        assert {"tiled", "unfused"} <= set(gemm)
    attn = {(v["name"], v["backend"]) for v in _kernel("attention")["variants"]}
    assert {("cpu", "cpu"), ("paged", "cpu")} <= attn
    qkv = {(v["name"], v["backend"]) for v in _kernel("qkv_projection")["variants"]}
    assert ("fused", "cpu") in qkv


def test_unknown_variant_names_what_is_available():
    with pytest.raises(ValueError, match="available: cpu, paged"):
        bwprof.measure("attention", device="cpu", variant="flash", heads=2, seq_q=4, head_dim=8, **Q)
    with pytest.raises(ValueError, match="variant"):
        bwprof.measure("qkv_projection", device="cpu", variant="separate", tokens=4, hidden=8, **Q)


def test_shape_errors_name_the_parameter():
    with pytest.raises(ValueError, match="hidden"):
        bwprof.measure("qkv_projection", device="cpu", tokens=4, hidden=0, **Q)
    with pytest.raises(ValueError, match="block_size"):
        bwprof.measure("attention", device="cpu", variant="paged", heads=2, seq_q=4, head_dim=8, block_size=0, **Q)


def test_quick_suite_runs_the_compute_configs_on_the_cpu():
    df = bwprof.run_suite(device="cpu", quick=True, progress=False, kernels=["gemm", "attention"],
                          dtypes=["fp32"])
    assert not df.attrs["errors"] and df["verified"].all()
    assert {"qkv_projection", "gemm", "attention"} <= set(df["kernel"])
    assert "paged" in set(df[df["kernel"] == "attention"]["variant"])
    labels = {c.label for c in default_suite() if c.kernel == "qkv_projection"}
    assert labels == {"encoder qkv"}
