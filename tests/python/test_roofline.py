"""Roofline math against points worked out by hand.

The roofs used throughout: 100 GB/s and 1000 GFLOP/s (ridge at 10 FLOP/byte), 120 GB/s on the
datasheet.
"""
import math

import numpy as np
import pandas as pd
import pytest

import bwprof
import bwprof.roofline as rl

BW, FL, BW_THEO = 100.0, 1000.0, 120.0


def peaks(**kw):
    p = {"bandwidth_gbs": BW, "bandwidth_source": "measured:stream_triad", "bandwidth_theoretical_gbs": BW_THEO,
         "gflops": FL, "compute_source": "measured:fma_chain", "gflops_theoretical": 0.0}
    p.update(kw)
    return p


def row(intensity, gflops, family="layernorm", dtype="fp32", flops=1e9):
    """A result row with the given intensity and achieved GFLOP/s (1 s of work scaled to fit)."""
    if intensity == 0:  # pure data movement: ``gflops`` is read as GB/s
        nbytes, t = 1e9, 1e9 / (gflops * 1e9)
        return {"kernel": family, "family": family, "dtype": dtype, "flops": 0.0, "bytes_read": nbytes / 2,
                "bytes_written": nbytes / 2, "gflops": 0.0, "bandwidth_gbs": gflops,
                "intensity_flop_per_byte": 0.0}
    nbytes = flops / intensity
    t = flops / (gflops * 1e9)
    return {"kernel": family, "family": family, "dtype": dtype, "flops": flops, "bytes_read": nbytes * 0.75,
            "bytes_written": nbytes * 0.25, "gflops": gflops, "bandwidth_gbs": nbytes / t / 1e9,
            "intensity_flop_per_byte": intensity}


def test_ridge_point_is_compute_over_bandwidth():
    assert rl.ridge_point(BW, FL) == pytest.approx(10.0)
    assert rl.ridge_point(2000.0, 50000.0) == pytest.approx(25.0)
    np.testing.assert_allclose(rl.ridge_point([100, 50], [1000, 1000]), [10.0, 20.0])
    assert math.isnan(rl.ridge_point(0.0, FL))
    assert math.isnan(rl.ridge_point(BW, 0.0))


def test_attainable_on_both_sides_of_the_ridge():
    assert rl.attainable(2.0, BW, FL) == pytest.approx(200.0)      # memory side: I x bw
    assert rl.attainable(0.25, BW, FL) == pytest.approx(25.0)
    assert rl.attainable(10.0, BW, FL) == pytest.approx(1000.0)    # at the ridge both roofs meet
    assert rl.attainable(50.0, BW, FL) == pytest.approx(1000.0)    # compute side: flat
    np.testing.assert_allclose(rl.attainable(np.array([0.5, 5, 512]), BW, FL), [50.0, 500.0, 1000.0])
    assert math.isnan(rl.attainable(2.0, 0.0, FL))


def test_ceilings_from_a_peaks_dict_with_device_info():
    info = {"bandwidth_theoretical_gbs": BW_THEO, "fp16_gflops_theoretical": 1500.0,
            "fp16_matrix_gflops_theoretical": 9000.0}
    c = rl.ceilings(peaks(bandwidth_theoretical_gbs=0.0), dtypes="fp16", info=info)
    assert list(c.columns) == rl.CEILING_COLUMNS
    got = {(r.kind, r.source): (r.value, r.unit) for r in c.itertuples()}
    assert got == {("memory", "measured"): (BW, "GB/s"), ("memory", "theoretical"): (BW_THEO, "GB/s"),
                   ("vector", "measured"): (FL, "GFLOP/s"), ("vector", "theoretical"): (1500.0, "GFLOP/s"),
                   ("matrix", "theoretical"): (9000.0, "GFLOP/s")}
    assert set(c["dtype"]) == {"fp16"}
    assert c[c.kind == "memory"].iloc[0]["detail"] == "measured:stream_triad"


def test_ceilings_per_dtype_dict_and_from_results_columns():
    c = rl.ceilings({"fp32": peaks(), "fp16": peaks(gflops=2 * FL)})
    assert set(c["dtype"]) == {"fp32", "fp16"}
    assert c[(c.dtype == "fp16") & (c.kind == "vector")]["value"].item() == 2 * FL
    df = pd.DataFrame([
        dict(row(2.0, 160.0), peak_bandwidth_gbs=BW, peak_gflops=FL, theoretical_bandwidth_gbs=BW_THEO,
             peak_bandwidth_source="measured:stream_copy", peak_compute_source="measured:fma"),
        dict(row(50.0, 4000.0, family="gemm", dtype="fp16"), peak_bandwidth_gbs=BW, peak_gflops=FL,
             theoretical_bandwidth_gbs=BW_THEO, variant="blas", label="ffn"),
    ])
    c = rl.ceilings(df, info={})
    fp32 = c[c.dtype == "fp32"]
    assert sorted(zip(fp32.kind, fp32.source, fp32.value)) == [
        ("memory", "measured", BW), ("memory", "theoretical", BW_THEO), ("vector", "measured", FL)]
    # a GEMM of the run never sets the matrix roof, however fast (it beats the vector roof here)
    assert not len(c[c.kind == "matrix"])
    # the matrix roof and the cache levels come from the peak columns bwprof's own kernels filled
    df["peak_matrix_gflops"] = [0.0, 6000.0]
    df["peak_matrix_source"] = ["none", "measured:mma_peak_fp16"]
    df["peak_l2_gbs"], df["peak_l1_gbs"] = 400.0, 900.0
    c = rl.ceilings(df, info={})
    m = c[(c.dtype == "fp16") & (c.kind == "matrix")]
    assert m["value"].item() == 6000.0 and m["source"].item() == "measured"
    assert m["detail"].item() == "measured:mma_peak_fp16"
    assert not len(c[(c.dtype == "fp32") & (c.kind == "matrix")])
    levels = c[(c.dtype == "fp32") & c.kind.isin(["l2", "l1"])]
    assert sorted(zip(levels.kind, levels.value, levels.unit)) == [("l1", 900.0, "GB/s"), ("l2", 400.0, "GB/s")]


def test_classify_memory_compute_and_latency_by_hand():
    ceil = rl.ceilings({"fp32": peaks()})
    df = pd.DataFrame([
        row(2.0, 160.0),    # memory side: roof 200, 80 % -> memory
        row(50.0, 600.0),   # compute side: roof 1000, 60 % -> compute
        row(2.0, 20.0),     # memory side but 10 % of the roof -> latency
        row(1.0, 0.9),      # "memory-bound" by its side, 0.9 % of bandwidth and 0.09 % of compute
        row(4.0, 100.0),    # exactly 25 % of the roof (400) is still memory
        row(0.0, 50.0),     # no FLOPs: judged by bandwidth alone, 50 %
        row(0.0, 10.0),     # no FLOPs, 10 % of the bandwidth -> latency
    ])
    out = rl.classify(df, ceil)
    np.testing.assert_allclose(out["attainable_gflops"].to_numpy(),
                               [200.0, 1000.0, 200.0, 100.0, 400.0, np.nan, np.nan])
    np.testing.assert_allclose(out["roofline_efficiency_pct"].to_numpy(),
                               [80.0, 60.0, 10.0, 0.9, 25.0, 50.0, 10.0])
    assert list(out["bound"]) == ["memory", "compute", "latency", "latency", "memory", "memory", "latency"]
    assert not out["above_peak"].any()
    assert out["ridge_flop_per_byte"].eq(10.0).all()
    note = out["roofline_note"].iloc[3]
    assert note.startswith("latency-bound: 0.9 % of the memory roof and 0.1 % of the fp32 vector roof")
    assert "dependencies" in note and "occupancy" in note
    assert df.columns.isin(out.columns).all() and "bound" not in df  # a copy; the input is untouched


def test_classify_flags_rows_above_their_ceiling():
    ceil = rl.ceilings({"fp32": peaks()})
    out = rl.classify(pd.DataFrame([row(0.0, 130.0),     # 130 GB/s > 120 on the datasheet
                                    row(0.0, 108.0),     # within 10 % of the measured peak: noise, fine
                                    row(0.0, 115.0),     # clearly above the measured peak, even under
                                                         # the datasheet: flagged (issue #12)
                                    row(50.0, 1200.0)]),  # 20 % above the measured compute roof
                      ceil)
    assert list(out["above_peak"]) == [True, False, True, True]
    assert "stayed in cache" in out["roofline_note"].iloc[0]
    assert "above the measured fp32 vector roof" in out["roofline_note"].iloc[3]
    # without a datasheet figure, 10 % over the measured peak is the limit
    ceil = rl.ceilings({"fp32": peaks(bandwidth_theoretical_gbs=0.0)})
    out = rl.classify(pd.DataFrame([row(0.0, 109.0), row(0.0, 111.0)]), ceil)
    assert list(out["above_peak"]) == [False, True]


def test_classify_uses_the_matrix_roof_for_gemm():
    ceil = rl.ceilings({"fp16": peaks()}, info={"fp16_matrix_gflops_theoretical": 8000.0})
    # A GPU GEMM measured on the tensor cores (its record says so), and an attention row on the CPU.
    df = pd.DataFrame([dict(row(100.0, 4000.0, family="gemm", dtype="fp16"), kernel="gemm", variant="tensor",
                            backend="cuda", peak_compute_source="theoretical:fp16_matrix_units"),
                       dict(row(100.0, 800.0, family="attention", dtype="fp16"), kernel="attention",
                            variant="cpu", backend="cpu", peak_compute_source="measured:fma_chain_fp32")])
    out = rl.classify(df, ceil)
    # GEMM: min(8000, 100 x 100) = 8000, 50 % -> compute, not above anything
    assert out["attainable_gflops"].tolist() == [8000.0, 1000.0]
    assert out["roofline_efficiency_pct"].tolist() == pytest.approx([50.0, 80.0])
    assert out["bound"].tolist() == ["compute", "compute"]
    assert out["ceiling_name"].tolist() == ["fp16 matrix (theoretical)", "fp16 vector"]
    assert not out["above_peak"].any()
    # judged against the vector roof alone, the same GEMM is 4x above it
    vec = rl.classify(df, ceil, matrix_families=())
    assert vec["above_peak"].tolist() == [True, False]
    theo = rl.classify(df, ceil, prefer="theoretical")  # falls back to measured where no datasheet
    assert theo["ceiling_bandwidth_gbs"].tolist() == [BW_THEO, BW_THEO]


def test_classify_rejects_bad_input_and_keeps_empty_frames():
    with pytest.raises(ValueError, match="DataFrame"):
        rl.classify([1, 2])
    with pytest.raises(ValueError, match="prefer"):
        rl.classify(pd.DataFrame([row(2.0, 160.0)]), rl.ceilings({"fp32": peaks()}), prefer="best")
    out = rl.classify(pd.DataFrame(columns=["kernel", "dtype"]), rl.ceilings({"fp32": peaks()}))
    assert len(out) == 0 and "bound" in out


@pytest.fixture(scope="module")
def cpu_run():
    return bwprof.run_suite(device="cpu", quick=True, kernels=["stream_triad", "gemm", "layernorm"],
                            progress=False)


def test_classify_agrees_with_the_core_on_a_real_run(cpu_run):
    out = rl.classify(cpu_run)  # ceilings from the run's own peak columns
    np.testing.assert_allclose(out["attainable_gflops"], cpu_run["attainable_gflops"], rtol=1e-9)
    np.testing.assert_allclose(out["roofline_efficiency_pct"], cpu_run["roofline_efficiency_pct"], rtol=1e-9)
    assert out["bound"].tolist() == cpu_run["bound"].tolist()
    assert out["above_peak"].tolist() == cpu_run["above_peak"].tolist()


def test_ceilings_of_a_device_and_of_a_run(cpu_run):
    c = rl.ceilings("cpu")
    assert set(c["dtype"]) == {"fp32", "fp16"}
    assert set(zip(c.kind, c.source)) >= {("memory", "measured"), ("vector", "measured")}
    assert (c["value"] > 0).all()
    run = rl.ceilings(cpu_run)
    # the CPU has no matrix units: no matrix roof, and none is made up from a GEMM of the run
    assert "matrix" not in set(run["kind"])
    assert run[run.kind == "memory"]["value"].iloc[0] == cpu_run["peak_bandwidth_gbs"].iloc[0]


def _unknown(gbs):
    """A row of unknown FLOPs (flops_source "unknown", flops NaN) moving 1 GB at ``gbs``."""
    r = row(0.0, gbs)
    r.update(flops=math.nan, flops_source="unknown", gflops=math.nan, intensity_flop_per_byte=math.nan)
    return r


def test_classify_never_calls_a_row_of_unknown_flops_latency_bound():
    ceil = rl.ceilings({"fp32": peaks()})
    df = pd.DataFrame([_unknown(6.1), _unknown(49.0), _unknown(50.0), _unknown(80.0),
                       dict(row(0.0, 6.1), flops_source="declared")])
    out = rl.classify(df, ceil)
    assert list(out["bound"]) == ["unknown", "unknown", "memory", "memory", "latency"]
    assert out["roofline_note"].iloc[0] == ("FLOPs unknown: at 6.1 % of the memory roof, bandwidth does not "
                                            "explain the time; pass flops= to judge it against the compute roof")
    assert "whatever its FLOPs (not known)" in out["roofline_note"].iloc[3]
    np.testing.assert_allclose(out["roofline_efficiency_pct"].to_numpy(), [np.nan, np.nan, 50.0, 80.0, 6.1])
    # A table from before schema 3 (no flops_source) declared its counts: an empty one is 0.
    old = pd.DataFrame([row(0.0, 6.1)]).assign(flops=math.nan)
    assert list(rl.classify(old, ceil)["bound"]) == ["latency"]


def test_the_core_takes_nan_flops_as_unknown_and_the_hint_as_given():
    j = bwprof._core.judge({"bytes": [1e9, 1e9], "flops": [math.nan, 0.0], "time_us": [1e6 / 6.1] * 2,
                            "bandwidth_roof_gbs": [100.0] * 2, "gflops_roof": [1000.0] * 2,
                            "flops_hint": "collect FLOP counters"})
    assert j["bound"] == ["unknown", "latency"]
    assert j["bottleneck"][0].endswith("collect FLOP counters to judge it against the compute roof")
    assert math.isnan(j["intensity_flop_per_byte"][0]) and j["intensity_flop_per_byte"][1] == 0.0


def test_a_run_with_unknown_flops_reads_back_and_judges_the_same(tmp_path):
    x = np.random.default_rng(3).random(200_003)
    m = bwprof.profile(np.negative, x, device="cpu", warmup=0, repeats=2, min_time_s=0.0, cache="hot")
    df = pd.DataFrame([m.to_dict()])
    back = bwprof.load_run(bwprof.save_run(df, tmp_path))
    assert back["flops_source"].iloc[0] == "unknown" and pd.isna(back["flops"].iloc[0])
    assert rl.classify(back)["bound"].iloc[0] == df["bound"].iloc[0]
