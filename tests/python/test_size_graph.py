"""Issue #14 part B on the CPU: the size-aware memory ceiling (curve, fit, columns, words, chart),
steady-state timing (timing="graph") and the clock columns."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import bwprof
import bwprof.plots as plots
import bwprof.roofline as rl
from bwprof import _core
from bwprof.baseline import OPTIONAL_KEY_COLUMNS

Q = dict(repeats=3, min_time_s=0.001, warmup=1)
NEW_COLUMNS = ["timing", "graph_launches", "rotation_sets", "sm_clock_mhz", "throttled_samples",
               "attainable_bandwidth_gbs", "bandwidth_pct_attainable", "fixed_cost_pct", "size_fixed_cost_us",
               "size_bandwidth_gbs"]


def test_the_cpu_has_a_size_curve_measured_with_its_peaks():
    c = bwprof.peaks("cpu")["size_curve"]
    assert c["bandwidth_gbs"] > 0 and c["t0_us"] >= 0 and math.isfinite(c["residual_pct"])
    pts = pd.DataFrame(c["points"])
    assert set(pts["kernel"]) == {"stream_copy", "stream_read"}  # copy and the clean read
    assert pts["bytes"].min() <= 4100 and pts["bytes"].max() >= 250e6
    assert (pts["time_us"] > 0).all()
    assert np.allclose(pts["bandwidth_gbs"], pts["bytes"] / pts["time_us"] / 1e3)
    assert np.allclose(pts["write_fraction"], np.where(pts["kernel"] == "stream_copy", 0.5, 4 / pts["bytes"]))
    # One line per pattern, each over its own kernel's sizes; the top level is the read line's fit
    # with the worst line's residual and the worst point's error.
    lines = {ln["pattern"]: ln for ln in c["lines"]}
    assert list(lines) == ["read", "copy"]
    for pattern, kernel in (("read", "stream_read"), ("copy", "stream_copy")):
        ln = lines[pattern]
        assert ln["kernels"] == kernel and ln["fitted_points"] == (pts["kernel"] == kernel).sum()
        assert ln["bandwidth_gbs"] > 0 and ln["t0_us"] >= 0 and ln["max_error_pct"] >= ln["residual_pct"] >= 0
    assert c["fitted_points"] == len(pts)
    assert (c["t0_us"], c["bandwidth_gbs"]) == (lines["read"]["t0_us"], lines["read"]["bandwidth_gbs"])
    assert c["residual_pct"] == max(ln["residual_pct"] for ln in lines.values())
    assert c["max_error_pct"] == max(ln["max_error_pct"] for ln in lines.values())
    # The same figures again: measured once per device and process, like the peaks.
    assert bwprof.peaks("cpu")["size_curve"] == c


def test_the_fit_recovers_a_line_and_reports_its_residual():
    b = 4096 * 2.0 ** np.arange(19)
    exact = [{"kernel": "stream_copy", "bytes": x, "time_us": 4.0 + x / 3.26e6} for x in b]
    c = _core.fit_size_curve(exact)
    assert c["t0_us"] == pytest.approx(4.0, rel=1e-9)
    assert c["bandwidth_gbs"] == pytest.approx(3260.0, rel=1e-9)
    assert c["residual_pct"] == pytest.approx(0.0, abs=1e-6)
    assert len(c["points"]) == 19
    assert math.isnan(_core.fit_size_curve(exact[:1])["bandwidth_gbs"])  # one size: no curve
    assert _core.fit_size_curve(exact[:1])["lines"] == []


@settings(max_examples=40, deadline=None)
@given(t0=st.floats(0.0, 50.0), bw=st.floats(1.0, 20000.0), noise=st.lists(st.floats(-0.02, 0.02), min_size=12,
                                                                            max_size=12))
def test_the_fit_stays_close_under_small_noise(t0, bw, noise):
    b = 4096 * 4.0 ** np.arange(12)
    pts = [{"kernel": "k", "bytes": x, "time_us": (t0 + x / (bw * 1e3)) * (1 + e)} for x, e in zip(b, noise)]
    c = _core.fit_size_curve(pts)
    assert c["bandwidth_gbs"] == pytest.approx(bw, rel=0.06)
    assert c["residual_pct"] <= 2.0 + 1e-9
    assert c["residual_pct"] <= c["max_error_pct"] + 1e-9
    # The fit's time at every measured size is within a few % of the measurement.
    for p in pts:
        t = c["t0_us"] + p["bytes"] / (c["bandwidth_gbs"] * 1e3)
        assert t == pytest.approx(p["time_us"], rel=0.06)


def test_each_access_pattern_gets_its_own_line_and_its_worst_point():
    b = 4096 * 2.0 ** np.arange(19)
    read = [{"kernel": "stream_read", "bytes": x, "time_us": 4.0 + x / 3.0e6, "write_fraction": 0.0} for x in b]
    copy = [{"kernel": "stream_copy", "bytes": x, "time_us": 3.5 + x / 3.4e6, "write_fraction": 0.5} for x in b]
    read[9]["time_us"] *= 1.38  # one point 38 % slow: the RMS spreads it, the worst point shows it
    c = _core.fit_size_curve(read + copy)
    lines = {ln["pattern"]: ln for ln in c["lines"]}
    assert lines["copy"]["t0_us"] == pytest.approx(3.5) and lines["copy"]["bandwidth_gbs"] == pytest.approx(3400)
    assert lines["read"]["max_error_pct"] > 20 > lines["read"]["residual_pct"]
    assert c["max_error_pct"] == lines["read"]["max_error_pct"] and c["residual_pct"] == lines["read"]["residual_pct"]
    assert lines["copy"]["max_error_pct"] < 1e-6
    # Without write fractions every point is a read: one line, the fastest kernel at each size.
    one = _core.fit_size_curve([{k: v for k, v in p.items() if k != "write_fraction"} for p in read + copy])
    assert len(one["lines"]) == 1 and one["lines"][0]["kernels"] == "stream_copy"


def test_a_row_is_judged_against_the_line_of_its_pattern():
    b = 4096 * 2.0 ** np.arange(19)
    pts = ([{"kernel": "stream_read", "bytes": x, "time_us": 4.0 + x / 3.0e6, "write_fraction": 0.0} for x in b]
           + [{"kernel": "stream_copy", "bytes": x, "time_us": 3.5 + x / 3.4e6, "write_fraction": 0.5} for x in b])
    peaks = dict(bwprof.peaks("cpu"), size_curve=_core.fit_size_curve(pts))
    dev = bwprof.device("cpu").info
    gemv = _core.judge_row("gemv", "cpu", dev, "fp32", {"N": 4096, "K": 4096}, 40.0, peaks)
    copy = _core.judge_row("stream_copy", "cpu", dev, "fp32", {"n": 1 << 22}, 40.0, peaks)
    assert gemv["size_fixed_cost_us"] == pytest.approx(4.0, rel=1e-3)
    assert gemv["size_bandwidth_gbs"] == pytest.approx(3000, rel=1e-3)
    assert copy["size_fixed_cost_us"] == pytest.approx(3.5) and copy["size_bandwidth_gbs"] == pytest.approx(3400)
    nbytes = gemv["bytes_read"] + gemv["bytes_written"]
    assert gemv["attainable_bandwidth_gbs"] == pytest.approx(nbytes / (4.0 + nbytes / 3.0e6) / 1e3, rel=1e-3)
    # A third of the bytes written (stream_add): between the two lines.
    add = _core.judge_row("stream_add", "cpu", dev, "fp32", {"n": 1 << 22}, 40.0, peaks)
    assert 3.5 < add["size_fixed_cost_us"] < 4.0 and 3000 < add["size_bandwidth_gbs"] < 3400
    # An older peaks dict (one fit, no lines) still judges every row against that one line.
    old = dict(peaks, size_curve={"t0_us": 5.0, "bandwidth_gbs": 2000.0})
    for kernel, params in (("gemv", {"N": 64, "K": 64}), ("stream_copy", {"n": 4096})):
        r = _core.judge_row(kernel, "cpu", dev, "fp32", params, 10.0, old)
        assert (r["size_fixed_cost_us"], r["size_bandwidth_gbs"]) == (5.0, 2000.0)


def test_every_row_carries_the_new_columns():
    cols = bwprof.columns()
    for c in NEW_COLUMNS:
        assert c in cols
    d = bwprof.measure("stream_triad", device="cpu", n=1 << 16, **Q).to_dict()
    assert d["timing"] == "single" and d["graph_launches"] == 1 and d["rotation_sets"] == 1
    assert math.isnan(d["sm_clock_mhz"]) and d["throttled_samples"] == 0  # the CPU reads no clock
    curve = bwprof.peaks("cpu")["size_curve"]
    nbytes = d["bytes_read"] + d["bytes_written"]
    t = d["size_fixed_cost_us"] + nbytes / (d["size_bandwidth_gbs"] * 1e3)
    assert d["size_bandwidth_gbs"] > 0 and d["size_fixed_cost_us"] >= 0
    assert d["attainable_bandwidth_gbs"] == pytest.approx(nbytes / t / 1e3, rel=1e-12)
    assert d["bandwidth_pct_attainable"] == pytest.approx(100 * d["bandwidth_gbs"] / d["attainable_bandwidth_gbs"],
                                                          rel=1e-12)
    assert d["fixed_cost_pct"] == pytest.approx(100 * d["size_fixed_cost_us"] / t, rel=1e-12)
    # A triad writes a third of its bytes: its line lies between the read line and the copy's.
    lines = {ln["pattern"]: ln for ln in curve["lines"]}
    lo, hi = sorted((lines["copy"]["t0_us"], lines["read"]["t0_us"]))
    if d["peak_bandwidth_gbs"] == bwprof.peaks("cpu")["bandwidth_gbs"]:  # (unless the row made the peaks be retaken)
        assert lo - 1e-9 <= d["size_fixed_cost_us"] <= hi + 1e-9
    if d["bound"] in ("memory", "latency") and not d["above_peak"]:
        assert "of what any kernel moving" in d["bottleneck"]


def test_graph_timing_on_the_cpu_rotates_sets_back_to_back():
    m = bwprof.measure("stream_triad", device="cpu", n=1 << 16, timing="graph", **Q).to_dict()
    assert m["timing"] == "graph" and m["cache"] == "cold" and m["verified"]
    assert 1 < m["rotation_sets"] <= 64
    assert m["graph_launches"] % m["rotation_sets"] == 0 and m["graph_launches"] >= 20
    assert m["bandwidth_gbs"] == pytest.approx((m["bytes_read"] + m["bytes_written"]) / m["time_median_us"] / 1e3,
                                               rel=1e-12)
    hot = bwprof.measure("stream_triad", device="cpu", n=1 << 16, timing="graph", cache="hot", **Q).to_dict()
    assert hot["rotation_sets"] == 1 and hot["cache"] == "hot"
    # The rotation is bounded by the device's memory and the set count; a big kernel needs few sets.
    info = bwprof.device("cpu").info
    big = bwprof.measure("stream_copy", device="cpu", n=1 << 22, timing="graph", **Q).to_dict()
    want = math.ceil(2 * info["cache_bytes"] / (big["bytes_read"] + big["bytes_written"])) + 1
    assert big["rotation_sets"] == min(want, 64)


@pytest.mark.parametrize("bad", ["graphs", "", "GRAPH", 1, None])
def test_bad_timing_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match="timing"):
        bwprof.measure("stream_copy", device="cpu", n=1024, timing=bad, **Q)
    with pytest.raises(ValueError, match="timing"):
        bwprof.run_suite(device="cpu", quick=True, kernels=["stream_copy"], timing=bad, progress=False)


def test_run_suite_in_graph_mode():
    df = bwprof.run_suite(device="cpu", quick=True, kernels=["stream_triad", "layernorm"], timing="graph",
                          progress=False)
    assert len(df) and (df["timing"] == "graph").all() and df["verified"].all()
    assert (df["graph_launches"] % df["rotation_sets"] == 0).all()


def test_classify_recomputes_the_size_columns_from_the_record():
    df = bwprof.run_suite(device="cpu", quick=True, kernels=["stream_copy", "gemv"], progress=False)
    out = rl.classify(df)
    for c in ("attainable_bandwidth_gbs", "bandwidth_pct_attainable", "fixed_cost_pct"):
        assert np.allclose(out[c].astype(float), df[c].astype(float), rtol=1e-9, equal_nan=True), c
    # A saved run without the size columns (an older schema) gets NaN, not a made-up ceiling.
    old = rl.classify(df.drop(columns=["size_fixed_cost_us", "size_bandwidth_gbs"]))
    assert old["attainable_bandwidth_gbs"].isna().all()


def test_the_size_chart_draws_the_curve_the_fit_and_every_kernel(tmp_path):
    df = bwprof.run_suite(device="cpu", quick=True, kernels=["stream_copy", "layernorm"], progress=False)
    curve = bwprof.peaks("cpu")["size_curve"]
    fig = plots.size_ceiling(df, curve, path=tmp_path / "size")
    ax = fig.axes[0]
    gids = [a.get_gid() for a in ax.get_children()]
    assert gids.count("bwprof-size-curve") == 2  # copy and read
    assert gids.count("bwprof-size-fit") == 2  # a line each
    assert "bwprof-size-kernels" in gids
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("read fit") and "worst" in t for t in labels), labels
    assert any(t.startswith("copy fit") for t in labels), labels
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert (tmp_path / "size.png").exists() and (tmp_path / "size.svg").exists()
    # From the rows alone (a saved run): the fit, no measured points.
    gids = [a.get_gid() for a in plots.size_ceiling(df).axes[0].get_children()]
    assert "bwprof-size-fit" in gids and "bwprof-size-curve" not in gids
    with pytest.raises(plots.NoData):
        plots.size_ceiling(df.drop(columns=["size_fixed_cost_us", "size_bandwidth_gbs"]))
    with pytest.raises(ValueError, match="curve"):
        plots.size_ceiling(df, curve=[1, 2])


def test_bench_in_graph_mode_saves_the_curve_and_the_size_chart(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "python"))
    r = subprocess.run([sys.executable, "-m", "bwprof", "bench", "--device", "cpu", "--quick", "--kernels",
                        "stream_copy", "--timing", "graph", "--no-progress", "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    run = next(tmp_path.iterdir())
    rows = pd.read_csv(run / "results.csv")
    assert (rows["timing"] == "graph").all()
    curve = json.loads((run / "size_curve.json").read_text())
    assert curve["bandwidth_gbs"] > 0 and len(curve["points"]) >= 12
    assert (run / "size_ceiling.png").exists() and "size_ceiling.png" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "bwprof", "bench", "--device", "cpu", "--timing", "steady",
                          "--out", str(tmp_path / "x")], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and not (tmp_path / "x").exists()


def test_baselines_key_rows_by_timing_mode():
    assert "timing" in OPTIONAL_KEY_COLUMNS
