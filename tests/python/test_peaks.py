"""Every roof measured by bwprof's own kernels: the peaks dict and table, the new kernels checked on
the CPU (and on a GPU where there is one), bad input, and the roofline chart's cache hierarchy."""
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import bwprof
import bwprof.plots as plots
import bwprof.roofline as rl
from bwprof import _core

HAVE_GPU = any(d.kind == "gpu" for d in bwprof.devices())


@pytest.fixture(scope="module")
def cpu_peaks():
    return bwprof.peaks("cpu", "fp16")


def test_cpu_peaks_carry_every_roof_the_cpu_has(cpu_peaks):
    p = cpu_peaks
    assert p["vector"]["fp32"]["gflops"] > 0 and p["vector"]["fp64"]["gflops"] > 0
    assert p["vector"]["fp64"]["source"] == "measured:fma_chain_fp64"
    assert "fp16" not in p["vector"]  # no FP16 arithmetic of its own
    assert p["matrix"] == {} and p["matrix_gflops"] == 0 and p["matrix_source"] == "none"
    info = bwprof.device("cpu").info
    if info["l2_cache_bytes"] > 0:
        l2 = p["levels"]["l2"]
        assert l2["read_gbs"] > 0 and l2["rw_gbs"] > 0 and l2["source"] == "measured:l2_bandwidth"
        assert l2["working_set_bytes"] == pytest.approx(
            info["compute_units"] * (info["l2_cache_bytes"] // 4 // 8192 * 8192))
        assert p["l2_gbs"] == max(l2["read_gbs"], l2["rw_gbs"])
    assert "shared" not in p["levels"]


def test_the_peak_table_lists_each_roof_once(cpu_peaks):
    t = bwprof.peak_table("cpu")
    assert list(t.columns) == bwprof.api.PEAK_TABLE_COLUMNS
    keys = list(zip(t["kind"], t["type"]))
    assert len(keys) == len(set(keys))
    assert ("memory", "dram") in keys and ("vector", "fp32") in keys and ("vector", "fp64") in keys
    assert not (t["kind"] == "matrix").any()
    assert (t[t["kind"] != "memory"]["theoretical"].isna()).all()  # no datasheet figures on a CPU
    if bwprof.device("cpu").info["l2_cache_bytes"] > 0:
        assert {("cache", "l2 read"), ("cache", "l2 rw")} <= set(keys)
        assert (t[t["kind"] == "cache"]["measured"] > 0).all()


def test_rows_carry_the_new_peak_columns():
    m = bwprof.measure("stream_copy", device="cpu", n=4096, repeats=1).to_dict()
    for c in ("peak_matrix_gflops", "peak_matrix_source", "peak_l2_gbs", "peak_l1_gbs", "peak_cache_source"):
        assert c in m
    assert m["peak_matrix_gflops"] == 0 and m["peak_matrix_source"] == "none"
    cols = bwprof.columns()
    assert cols.index("peak_matrix_gflops") == cols.index("peak_compute_source") + 1


@pytest.mark.parametrize("kernel,shape", [
    ("l2_bandwidth", dict(op="rw", bytes=8 * 8192, workers=4, passes=3)),
    ("l2_bandwidth", dict(op="read", bytes=3 * 4096, workers=3, passes=2)),
    ("l1_bandwidth", dict(bytes=4096, workers=1, passes=7)),
    ("fma_chain", dict(math="fp64", workers=1, iters=64)),
])
def test_cpu_roof_kernels_pass_their_checks(kernel, shape):
    m = bwprof.measure(kernel, device="cpu", repeats=1, **shape)
    assert m.verified


@pytest.mark.parametrize("kernel,shape,name", [
    ("l2_bandwidth", dict(op="write"), "op"),
    ("l2_bandwidth", dict(bytes=5000, workers=1), "bytes"),
    ("l1_bandwidth", dict(op="rw"), "op"),
    ("fma_chain", dict(math="fp128"), "math"),
])
def test_bad_roof_kernel_arguments_name_themselves(kernel, shape, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        bwprof.measure(kernel, device="cpu", repeats=1, **shape)


@pytest.mark.skipif(not bwprof.GPU_BUILD, reason="the matrix peak's variant exists only in a GPU build")
@pytest.mark.parametrize("params,name", [(dict(type="fp4"), "type"), (dict(engine="tpu"), "engine"),
                                         (dict(workers=0), "workers")])
def test_bad_matrix_peak_arguments_name_themselves(params, name):
    gpu = {"id": "gpu:0", "kind": "gpu", "name": "synthetic", "backend": "cuda", "arch": "sm_90"}
    with pytest.raises(ValueError, match=f"^{name}"):
        _core.judge_row("mma_peak", "gpu", gpu, "fp16", params, 1.0, {})


def test_no_matrix_or_shared_kernel_on_the_cpu():
    with pytest.raises(ValueError):
        bwprof.measure("mma_peak", dtype="fp16", device="cpu")
    with pytest.raises(ValueError):
        bwprof.measure("shared_bandwidth", device="cpu")


def test_cli_peaks_prints_the_table():
    r = subprocess.run([sys.executable, "-m", "bwprof", "peaks", "--device", "cpu"], capture_output=True, text=True,
                       check=True)
    assert "every roof" in r.stdout and "fp64" in r.stdout and "dram" in r.stdout


def _rows():
    rows = []
    for name, inten, gfl in [("gemm", 40.0, 600.0), ("stream_copy", 0.1, 9.0), ("layernorm", 1.0, 350.0)]:
        rows.append({"kernel": name, "family": name, "variant": "ref", "dtype": "fp32", "shape": "n=1",
                     "device": "gpu:0", "device_name": "Test GPU", "intensity_flop_per_byte": inten,
                     "gflops": gfl, "peak_bandwidth_gbs": 100.0, "peak_gflops": 1000.0,
                     "peak_bandwidth_source": "measured:stream_triad", "peak_compute_source": "measured:fma",
                     "theoretical_bandwidth_gbs": 120.0, "peak_l2_gbs": 400.0, "peak_l1_gbs": 1500.0,
                     "peak_cache_source": "measured:l2_bandwidth,shared_bandwidth", "above_peak": name == "layernorm"})
    return pd.DataFrame(rows)


def test_the_roofline_draws_the_hierarchy_when_measured():
    df = _rows()
    fig = plots.roofline(df)
    ax = fig.axes[0]
    levels = {line.get_label() for line in ax.lines if line.get_gid() == plots.LEVEL_GID}
    assert levels == {"L2 roof", "L1/shared roof"}
    l2 = next(line for line in ax.lines if line.get_label() == "L2 roof")
    x, y = l2.get_data()
    np.testing.assert_allclose(y, np.minimum(np.asarray(x) * 400.0, 1000.0))  # capped by the compute roof
    off = plots.roofline(df, hierarchy=False).axes[0]
    assert not [line for line in off.lines if line.get_gid() == plots.LEVEL_GID]
    plain = df.drop(columns=["peak_l2_gbs", "peak_l1_gbs"])
    assert not [line for line in plots.roofline(plain).axes[0].lines if line.get_gid() == plots.LEVEL_GID]
    with pytest.raises(plots.NoData):
        plots.roofline(plain, hierarchy=True)


def test_classify_names_the_level_that_serves_a_row_above_dram():
    df = pd.DataFrame([{"kernel": "stream_copy", "dtype": "fp32", "bytes_read": 4e6, "bytes_written": 4e6,
                        "flops": 0.0, "time_median_us": 40.0, "cache": "hot", "access_pattern": "coalesced",
                        "peak_bandwidth_gbs": 100.0, "theoretical_bandwidth_gbs": 120.0, "peak_l2_gbs": 400.0,
                        "peak_l1_gbs": 1500.0}])
    out = rl.classify(df)  # 200 GB/s: above DRAM, within the L2
    assert out["roofline_note"].iloc[0].startswith("above DRAM: L2 can serve it (L2 roof 400 GB/s); ")
    ceil = rl.ceilings({"bandwidth_gbs": 100.0, "bandwidth_theoretical_gbs": 120.0, "gflops": 1000.0,
                        "l2_gbs": 400.0, "l1_gbs": 1500.0})
    assert rl.classify(df, ceil)["roofline_note"].iloc[0] == out["roofline_note"].iloc[0]


@pytest.mark.skipif(not HAVE_GPU, reason="needs a GPU")
def test_gpu_matrix_peaks_per_type_and_their_checks():
    info = bwprof.device("gpu").info
    p = bwprof.peaks("gpu", "fp16")
    for t, theo in info["matrix_gflops_theoretical"].items():
        m = bwprof.measure("mma_peak", dtype="fp16", device="gpu", type=t, workers=3, iters=2, repeats=1)
        assert m.verified, t
        assert p["matrix"][t]["gflops"] > 0, p["matrix"][t]
        assert p["matrix"][t]["gflops"] <= 1.05 * theo, (t, p["matrix"][t], theo)
    assert p["matrix_gflops"] == p["matrix"].get("fp16", {}).get("gflops", 0.0)
    for level in ("l2", "l1", "shared"):
        assert p["levels"][level]["read_gbs"] > 0, p["levels"][level]
