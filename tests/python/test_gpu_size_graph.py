"""Issue #14 part B on a GPU: the size curve, timing="graph" for every family (captured in a CUDA/HIP
graph), and the SM clock in every row (skipped without a GPU)."""
import ctypes
import math

import pandas as pd
import pytest

import bwprof

pytestmark = pytest.mark.gpu
Q = dict(repeats=3, min_time_s=0.0, warmup=1)


def _has_nvml() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


def test_the_gpu_size_curve_spans_4kb_to_past_the_sweet_spot():
    c = bwprof.peaks("gpu")["size_curve"]
    pts = pd.DataFrame(c["points"])
    assert set(pts["kernel"]) == {"stream_copy", "stream_read"}  # the clean read and the copy
    assert pts["bytes"].min() <= 4100 and pts["bytes"].max() >= 1e9
    lines = {ln["pattern"]: ln for ln in c["lines"]}
    assert set(lines) == {"read", "copy"}
    assert lines["read"]["kernels"] == "stream_read" and lines["copy"]["kernels"] == "stream_copy"
    peak = bwprof.peaks("gpu")["bandwidth_gbs"]
    for ln in lines.values():
        # A launch and its first bytes cost microseconds; the asymptote is near the stream peak.
        assert 0.5 <= ln["t0_us"] <= 30, ln
        assert 0.8 * peak <= ln["bandwidth_gbs"] <= 1.2 * peak, (ln, peak)
        assert ln["residual_pct"] < 25 and ln["max_error_pct"] >= ln["residual_pct"], ln
        print(f"\nsize curve, {ln['pattern']}: t(B) = {ln['t0_us']:.2f} us + B / {ln['bandwidth_gbs']:.0f} GB/s, "
              f"residual {ln['residual_pct']:.1f} % RMS, worst point {ln['max_error_pct']:.1f} %, "
              f"over {ln['fitted_points']} sizes")
    assert c["t0_us"] == lines["read"]["t0_us"] and c["residual_pct"] == max(ln["residual_pct"] for ln in lines.values())
    # A GEMV (a read) is judged against the read line; a copy against the copy's.
    for kernel, kw, pattern in (("gemv", dict(dtype="fp16", N=4096, K=4096), "read"),
                                ("stream_copy", dict(n=1 << 22), "copy")):
        d = bwprof.measure(kernel, device="gpu", **kw, **Q).to_dict()
        assert d["size_fixed_cost_us"] == pytest.approx(lines[pattern]["t0_us"], rel=2e-3), (kernel, d)
        assert d["size_bandwidth_gbs"] == pytest.approx(lines[pattern]["bandwidth_gbs"], rel=2e-3), (kernel, d)


# One configuration of every family, small (graph mode makes up to 64 copies of the inputs).
GRAPH_CASES = [
    ("stream_copy", None, "fp32", dict(n=1000003)),
    ("stream_dot", None, "fp32", dict(n=999999)),   # one kernel whose last block resets a counter
    ("stream_read", None, "fp32", dict(n=999983)),
    ("stream_triad", None, "fp16", dict(n=1 << 20)),
    ("fill", None, "fp32", dict(n=1 << 20)),
    ("layernorm", None, "fp16", dict(rows=37, cols=4096)),
    ("bias_act", "fused", "fp16", dict(rows=33, cols=4864, act="gelu")),
    ("bias_act", "unfused", "fp16", dict(rows=17, cols=1000, act="relu")),
    ("kv_cache_append", "contiguous", "fp16", dict(batch=3, kv_heads=2, head_dim=64, max_seq=300, new_tokens=37)),
    ("kv_cache_append", "paged", "fp16", dict(batch=4, kv_heads=2, head_dim=128, max_seq=257, new_tokens=41,
                                                block_size=16)),
    ("q4_0_dequant", None, "fp16", dict(rows=33, cols=4096)),
    ("q4_0_matmul", "llama", "fp16", dict(M=1, N=1000, K=4096)),
    ("q4_0_matmul", "tiled", "fp16", dict(M=1, N=1001, K=4096)),
    ("gemv", None, "fp16", dict(N=4096, K=4096)),
    ("gemm", "tiled", "fp32", dict(M=64, N=96, K=128)),
    ("gemm", "tensor", "fp16", dict(M=128, N=256, K=256)),
    ("gemm", "unfused", "fp16", dict(M=64, N=128, K=64, act="gelu", bias=True)),
    ("qkv_projection", None, "fp16", dict(tokens=16, hidden=256)),
    ("attention", "flash", "fp16", dict(batch=1, heads=2, seq_q=64, seq_kv=64, head_dim=64)),
    ("attention", "flash_paged", "fp16", dict(batch=2, heads=4, seq_q=1, seq_kv=300, head_dim=128, block_size=16)),
    ("intensity_sweep", None, "fp32", dict(n=100003, fmas=4)),
]


@pytest.mark.parametrize("kernel,variant,dtype,shape", GRAPH_CASES)
def test_every_family_times_as_a_graph(kernel, variant, dtype, shape):
    try:
        d = bwprof.measure(kernel, dtype=dtype, device="gpu", variant=variant, timing="graph", **shape,
                           **Q).to_dict()
    except ValueError as e:
        # A kernel that cannot be captured says so, naming itself and the way out.
        assert "timing" in str(e) and kernel in str(e) and "timing='single'" in str(e)
        pytest.skip(f"not capturable: {e}")
    assert d["timing"] == "graph" and d["verified"], d  # checked again after the replays
    assert d["graph_launches"] % d["rotation_sets"] == 0 and d["graph_launches"] >= 20
    assert d["time_median_us"] > 0


def test_vendor_gemm_in_a_graph_or_a_clear_error():
    if "vendor_blas" not in bwprof._core.build_features():
        pytest.skip("no vendor BLAS in this build")
    try:
        d = bwprof.measure("gemm", dtype="fp16", device="gpu", variant="vendor", timing="graph", M=128, N=256,
                           K=256, **Q).to_dict()
    except ValueError as e:
        assert "gemm/vendor" in str(e) and "timing='single'" in str(e)
        return
    assert d["verified"]


def test_rotated_sets_keep_a_graph_out_of_the_l2():
    # 32 MB of W: cold graph rows rotate enough copies to exceed twice the L2, and read at a DRAM
    # rate (not above the peak, as they would if a cache served them or the graph did nothing).
    info = bwprof.device("gpu").info
    cold = bwprof.measure("gemv", dtype="fp16", device="gpu", N=4096, K=4096, timing="graph", **Q).to_dict()
    assert cold["rotation_sets"] * cold["bytes_read"] > 2 * info["cache_bytes"]
    assert not cold["above_peak"] and cold["bandwidth_pct_peak"] > 30, cold["bottleneck"]
    hot = bwprof.measure("gemv", dtype="fp16", device="gpu", N=4096, K=4096, timing="graph", cache="hot",
                         **Q).to_dict()
    assert hot["rotation_sets"] == 1


def test_gpu_rows_record_the_sm_clock():
    d = bwprof.measure("stream_copy", device="gpu", n=1 << 24, **Q).to_dict()
    info = bwprof.device("gpu").info
    if d["backend"] == "cuda" and _has_nvml():
        assert 100 <= d["sm_clock_mhz"] <= 1.2 * info["clock_mhz"], d["sm_clock_mhz"]
    else:
        assert math.isnan(d["sm_clock_mhz"]) or d["sm_clock_mhz"] > 0
    assert 0 <= d["throttled_samples"] <= d["repeats"]


def test_the_size_text_on_a_gpu_row():
    d = bwprof.measure("gemv", dtype="fp16", device="gpu", N=4096, K=4096, **Q).to_dict()
    assert d["attainable_bandwidth_gbs"] > 0 and 0 < d["fixed_cost_pct"] < 100
    assert f"{d['bandwidth_pct_attainable']:.0f} % of what any kernel moving" in d["bottleneck"], d["bottleneck"]
