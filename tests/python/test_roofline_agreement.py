"""One judgement: a row measured on a GPU (the core's row path) and the same row re-judged from a
DataFrame (roofline.classify) agree, for the kinds of work where the two used to disagree: FP16
attention, the QKV projection and the tiled Q4_0 matmul on the matrix units, beside GEMMs and
vector work. No GPU is needed: ``_core.judge_row`` takes the path of ``measure()`` after timing."""
import math

import numpy as np
import pandas as pd
import pytest

import bwprof
import bwprof.roofline as rl
from bwprof import _core

pytestmark = pytest.mark.skipif(not bwprof.GPU_BUILD, reason="the GPU variants exist only in a GPU build")

# An H100-like device (SXM: 132 SMs at 1.98 GHz, 3352 GB/s on the datasheet).
INFO = {"id": "gpu:0", "kind": "gpu", "name": "synthetic H100", "backend": "cuda", "arch": "sm_90",
        "bandwidth_theoretical_gbs": 3352.0, "fp32_gflops_theoretical": 66908.0,
        "fp16_gflops_theoretical": 133816.0, "fp16_matrix_gflops_theoretical": 1070530.0}
# As bwprof.peaks() gives them: each dtype's compute roof that of the FP32 its rows compute in
# (compute_arithmetic), and every arithmetic type's roof in `vector` (issue #45).
VECTOR = {"fp32": {"gflops": 60000.0, "gflops_theoretical": 66908.0, "source": "measured:fma_chain_fp32"},
          "fp16": {"gflops": 120000.0, "gflops_theoretical": 133816.0, "source": "measured:fma_chain_fp16"}}
PEAKS = {
    "fp32": {"bandwidth_gbs": 3075.0, "bandwidth_source": "measured:stream_add", "bandwidth_theoretical_gbs": 3352.0,
             "gflops": 60000.0, "compute_source": "measured:fma_chain_fp32", "gflops_theoretical": 66908.0,
             "compute_arithmetic": "fp32 vector", "vector": VECTOR},
    "fp16": {"bandwidth_gbs": 3075.0, "bandwidth_source": "measured:stream_add", "bandwidth_theoretical_gbs": 3352.0,
             "gflops": 60000.0, "compute_source": "measured:fma_chain_fp32", "gflops_theoretical": 66908.0,
             "compute_arithmetic": "fp32 vector", "vector": VECTOR,
             "matrix_gflops": 820000.0, "matrix_gflops_theoretical": 1070530.0,
             "matrix_source": "measured:mma_peak_fp16"},
}
# The cache levels bwprof measures on every device (the same for both dtypes).
for _p in PEAKS.values():
    _p.update(l2_gbs=7100.0, l1_gbs=30000.0, cache_source="measured:l2_bandwidth,shared_bandwidth")
ATTN = dict(heads=32, seq_q=4096, head_dim=128, causal=True)
CASES = [  # kernel, variant, dtype, params, time_us, cache
    ("attention", "flash", "fp16", ATTN, 800.0, "cold"),             # matrix units, compute side
    ("attention", "flash", "fp16", dict(ATTN, seq_q=1, seq_kv=8192, causal=False, batch=8), 400.0, "cold"),
    ("attention", "flash", "fp32", ATTN, 9000.0, "cold"),            # FP32: vector units
    ("qkv_projection", "fused", "fp16", dict(tokens=64, hidden=768), 12.0, "cold"),
    ("qkv_projection", "separate", "fp16", dict(tokens=4096, hidden=4096), 700.0, "cold"),
    ("q4_0_matmul", "tiled", "fp16", dict(M=1, N=14336, K=4096), 16.8, "cold"),
    ("q4_0_matmul", "llama", "fp16", dict(M=1, N=14336, K=4096), 33.4, "cold"),  # not on the matrix units
    ("gemm", "tensor", "fp16", dict(M=4096, N=4096, K=4096), 213.0, "cold"),
    ("gemm", "tiled", "fp32", dict(M=4096, N=4096, K=4096), 9000.0, "cold"),
    ("gemm", "tensor", "fp16", dict(M=4096, N=4096, K=4096), 100.0, "hot"),    # above the matrix roof
    ("layernorm", "gpu", "fp16", dict(rows=65536, cols=4096), 351.0, "cold"),
    ("stream_triad", "gpu", "fp32", dict(n=1 << 28), 1047.0, "cold"),
    ("stream_copy", "gpu", "fp32", dict(n=1 << 20), 1.5, "hot"),     # above the datasheet: cache
    ("kv_cache_append", "contiguous", "fp16", dict(kv_heads=2, head_dim=64, max_seq=4096), 4.1, "cold"),
]
JUDGED = ["attainable_gflops", "roofline_efficiency_pct"]


@pytest.fixture(scope="module")
def rows():
    recs = [_core.judge_row(k, v, INFO, dt, params, t, PEAKS[dt], cache) for k, v, dt, params, t, cache in CASES]
    return pd.DataFrame(recs)


def _same(a: pd.DataFrame, rows: pd.DataFrame) -> None:
    for c in JUDGED:
        np.testing.assert_allclose(a[c].to_numpy(float), rows[c].to_numpy(float), rtol=1e-12, equal_nan=True,
                                   err_msg=c)
    assert a["bound"].tolist() == rows["bound"].tolist()
    assert a["above_peak"].tolist() == rows["above_peak"].tolist()
    assert a["roofline_note"].tolist() == rows["bottleneck"].tolist()


def test_the_rows_cover_matrix_vector_latency_and_above_peak(rows):
    on_matrix = rows["peak_compute_source"].str.contains("matrix")
    assert on_matrix.tolist() == [True, True, False, True, True, True, False, True, False, True, False, False,
                                  False, False]
    assert set(rows["bound"]) >= {"compute", "memory", "latency"}
    assert rows["above_peak"].sum() == 2
    # The matrix rows are judged against bwprof's measured matrix peak, not the datasheet's.
    assert set(rows[on_matrix]["peak_gflops"]) == {820000.0}
    assert rows[on_matrix]["peak_compute_source"].str.startswith("measured:mma_peak_fp16").all()
    # A copy hot in L2, above the DRAM datasheet figure: the text names the level that serves it.
    copy = rows[rows["kernel"] == "stream_copy"].iloc[0]
    assert copy["bottleneck"].startswith("above DRAM: L2 can serve it (L2 roof 7.1 TB/s); "), copy["bottleneck"]
    assert copy["peak_l2_gbs"] == 7100.0 and copy["peak_l1_gbs"] == 30000.0


def test_without_cache_columns_the_text_is_the_plain_above_peak_one(rows):
    old = rl.classify(rows.drop(columns=["peak_l2_gbs", "peak_l1_gbs"]), info=INFO)
    note = old[old["kernel"] == "stream_copy"]["roofline_note"].iloc[0]
    assert note.startswith("5.592 TB/s is above the device's theoretical memory bandwidth"), note


def test_a_run_re_judged_from_its_own_columns_agrees(rows):
    _same(rl.classify(rows, info=INFO), rows)


def test_rows_judged_against_the_same_ceilings_agree(rows):
    ceil = rl.ceilings(PEAKS, info=INFO)
    _same(rl.classify(rows, ceil), rows)
    # Without the record's compute source the registry decides which rows ran on the matrix units:
    # the same ones.
    _same(rl.classify(rows.drop(columns=["peak_compute_source"]), ceil), rows)


def test_the_registry_names_the_matrix_unit_variants():
    m = rl.matrix_variants()
    for kernel, variant in [("gemm", "tensor"), ("qkv_projection", "fused"), ("qkv_projection", "separate"),
                            ("attention", "flash"), ("attention", "flash_paged"), ("q4_0_matmul", "tiled")]:
        assert (kernel, "gpu", variant, "fp16") in m
        assert (kernel, "gpu", variant, "fp32") not in m
    assert ("q4_0_matmul", "gpu", "llama", "fp16") not in m
    assert not any(b == "cpu" for _, b, _, _ in m)
