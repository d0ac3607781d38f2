"""Every row judged against the roof of the arithmetic it does (issue #45): the FMA chains in FP64
against the FP64 roof, FP16 and BF16 data (computed in FP32 by bwprof's kernels) against FP32's, the
packed chains of a GPU against their own; a roof of that arithmetic measured, else the architecture
table's, else none (said, never another arithmetic's). Checked on real CPU rows and on generated
rows through the core's row path (``_core.judge_row``) and the re-judgement (``roofline.classify``)."""
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bwprof
import bwprof.roofline as rl
from bwprof import _core


# The peaks are read right after each measurement: another test in the process may take them again.
def test_fma_chain_fp64_on_the_cpu_is_judged_against_the_fp64_roof():
    d = bwprof.measure("fma_chain", device="cpu", math="fp64", workers=1, iters=1 << 14, repeats=3).to_dict()
    cpu_peaks = bwprof.peaks("cpu")
    fp64, fp32 = cpu_peaks["vector"]["fp64"], cpu_peaks["vector"]["fp32"]
    assert d["verified"]
    assert d["peak_compute_arithmetic"] == "fp64 vector"
    assert d["peak_compute_source"] == "measured:fma_chain_fp64" == fp64["source"]
    assert d["peak_gflops"] == fp64["gflops"] != fp32["gflops"]
    assert d["compute_pct_peak"] == pytest.approx(100.0 * d["gflops"] / fp64["gflops"])
    assert "fp64 vector roof" in d["bottleneck"], d["bottleneck"]
    # The same chains in FP32: the FP32 roof.
    f = bwprof.measure("fma_chain", device="cpu", workers=1, iters=1 << 14, repeats=3).to_dict()
    assert f["peak_compute_arithmetic"] == "fp32 vector"
    assert f["peak_gflops"] == bwprof.peaks("cpu")["vector"]["fp32"]["gflops"]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_rows_of_every_dtype_record_the_fp32_arithmetic_they_compute_in(dtype):
    d = bwprof.measure("stream_triad", dtype=dtype, device="cpu", n=4096, repeats=1).to_dict()
    cpu_peaks = bwprof.peaks("cpu")
    assert d["peak_compute_arithmetic"] == "fp32 vector"
    assert d["peak_gflops"] == cpu_peaks["vector"]["fp32"]["gflops"]
    p = bwprof.peaks("cpu", dtype)
    assert p["compute_arithmetic"] == "fp32 vector" and p["gflops"] == cpu_peaks["vector"]["fp32"]["gflops"]


def test_a_run_re_judged_keeps_each_rows_arithmetic():
    rows = pd.DataFrame([bwprof.measure("fma_chain", device="cpu", math=m, workers=1, iters=1 << 12,
                                        repeats=1).to_dict() for m in ("fp64", "dtype", "dtype")])
    out = rl.classify(rows)
    assert out["ceiling_name"].tolist() == ["fp64 vector", "fp32 vector", "fp32 vector"]
    assert out["ceiling_gflops"].tolist() == rows["peak_gflops"].tolist()
    assert out["roofline_note"].tolist() == rows["bottleneck"].tolist()
    # The ceilings a run gives: the FP32 rows' roof is FP32's, not the FP64 row's.
    ceil = rl.ceilings(rows)
    vec = ceil[(ceil["kind"] == "vector") & (ceil["source"] == "measured")]
    assert len(vec) == 1 and vec["arithmetic"].tolist() == ["fp32 vector"]
    assert vec["value"].iloc[0] in set(rows["peak_gflops"].iloc[1:])
    # Against those ceilings the FP64 row finds no FP64 roof: it says so, judged against no other.
    j = rl.classify(rows, ceil)
    assert math.isnan(j["ceiling_gflops"].iloc[0]) and j["ceiling_name"].iloc[0] == "fp64 vector"
    assert j["roofline_note"].iloc[0].startswith("no fp64 vector roof is measured or known"), j["roofline_note"].iloc[0]
    assert j["bound"].iloc[0] == "unknown"
    assert j["roofline_note"].tolist()[1:] == rows["bottleneck"].tolist()[1:]


# ---- generated rows: kernels, dtypes and chains against generated peaks ---------------------------

CPU = {"id": "cpu", "kind": "cpu", "name": "synthetic CPU", "backend": "cpu", "arch": "x86_64"}
TYPES = ("fp32", "fp64", "fp16", "bf16")
# (kernel, variant, dtype choices, params, the arithmetic its rows do)
CPU_CASES = [
    ("fma_chain", "cpu", ["fp32"], {"math": "fp64", "workers": 2, "iters": 64}, "fp64 vector"),
    ("fma_chain", "cpu", ["fp32"], {"math": "dtype", "workers": 2, "iters": 64}, "fp32 vector"),
    ("stream_triad", "", ["fp32", "fp16", "bf16"], {"n": 1 << 16}, "fp32 vector"),
    ("gemm", "", ["fp32", "fp16", "bf16"], {"M": 64, "N": 64, "K": 64}, "fp32 vector"),
    ("layernorm", "", ["fp32", "fp16", "bf16"], {"rows": 64, "cols": 256}, "fp32 vector"),
    ("intensity_sweep", "", ["fp32", "fp16", "bf16"], {"n": 1 << 14, "fmas": 64}, "fp32 vector"),
]


@st.composite
def peaks_dicts(draw):
    """A peaks dict as bwprof.peaks() gives one: some types measured, some only in the architecture
    table, some absent; the top-level roof the FP32 one (what every dtype computes in), where
    measured. (A measured roof's datasheet figure is left out: a row does not record it, so
    re-judging a row from its own columns could not see it.)"""
    vector = {}
    for t in TYPES:
        kind = draw(st.sampled_from(["measured", "table", "absent"]))
        if kind == "absent":
            continue
        measured = draw(st.floats(10.0, 1e6)) if kind == "measured" else 0.0
        vector[t] = {"gflops": measured, "gflops_theoretical": 0.0 if measured else draw(st.floats(10.0, 1e6)),
                     "source": f"measured:fma_chain_{t}" if measured else "none"}
    p = {"bandwidth_gbs": draw(st.floats(1.0, 1e4)), "bandwidth_source": "measured:stream_copy",
         "vector": vector, "compute_arithmetic": "fp32 vector"}
    f32 = vector.get("fp32", {})
    if f32.get("gflops"):
        p.update(gflops=f32["gflops"], gflops_theoretical=f32["gflops_theoretical"], compute_source=f32["source"])
    return p


def _expected_roof(p, arithmetic):
    t = arithmetic.split(" ")[0]
    e = p["vector"].get(t, {})
    if e.get("gflops", 0) > 0:
        return e["gflops"], e["source"]
    if e.get("gflops_theoretical", 0) > 0:
        return e["gflops_theoretical"], f"theoretical:{t}_vector"
    return 0.0, "none"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CPU_CASES), data=st.data(), peaks=peaks_dicts(),
       time_us=st.floats(0.5, 1e5))
def test_every_generated_row_takes_the_roof_of_its_arithmetic(case, data, peaks, time_us):
    kernel, variant, dtypes, params, arithmetic = case
    dtype = data.draw(st.sampled_from(dtypes))
    row = _core.judge_row(kernel, variant, CPU, dtype, params, time_us, peaks)
    assert row["peak_compute_arithmetic"] == arithmetic
    roof, source = _expected_roof(peaks, arithmetic)
    assert row["peak_gflops"] == roof
    assert row["peak_compute_source"].startswith(source), (row["peak_compute_source"], source)
    if roof > 0:
        assert row["compute_pct_peak"] == pytest.approx(100.0 * row["gflops"] / roof)
    else:  # no roof of its own: never judged compute- or latency-bound by another arithmetic's
        assert row["bound"] in ("memory", "unknown"), row
        assert math.isnan(row["compute_pct_peak"])
        if not row["above_peak"]:
            assert f"no {arithmetic} roof" in row["bottleneck"], row["bottleneck"]
    # Re-judged from its own record, the row gives back its own verdict.
    again = rl.classify(pd.DataFrame([row]))
    assert again["bound"].iloc[0] == row["bound"]
    assert again["roofline_note"].iloc[0] == row["bottleneck"]
    assert again["ceiling_name"].iloc[0].startswith(arithmetic)


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CPU_CASES[2:]), data=st.data(), peaks=peaks_dicts(), time_us=st.floats(0.5, 1e5))
def test_rows_judged_against_the_peaks_ceilings_agree_with_the_core(case, data, peaks, time_us):
    kernel, variant, dtypes, params, _ = case
    dtype = data.draw(st.sampled_from(dtypes))
    row = _core.judge_row(kernel, variant, CPU, dtype, params, time_us, peaks)
    ceil = rl.ceilings({dt: peaks for dt in ("fp32", "fp16", "bf16")})
    out = rl.classify(pd.DataFrame([row]), ceil)
    got = out["ceiling_gflops"].iloc[0]
    assert got == row["peak_gflops"] if row["peak_gflops"] > 0 else math.isnan(got)
    assert out["bound"].iloc[0] == row["bound"]
    assert bool(out["above_peak"].iloc[0]) == row["above_peak"]
    assert out["roofline_note"].iloc[0] == row["bottleneck"]


GPU_INFO = {"id": "gpu:0", "kind": "gpu", "name": "synthetic H100", "backend": "cuda", "arch": "sm_90",
            "bandwidth_theoretical_gbs": 3352.0, "fp32_gflops_theoretical": 66908.0,
            "fp16_gflops_theoretical": 133816.0, "fp16_matrix_gflops_theoretical": 1070530.0}


@pytest.mark.skipif(not bwprof.GPU_BUILD, reason="the GPU variants exist only in a GPU build")
@settings(max_examples=80, deadline=None)
@given(dtype=st.sampled_from(["fp32", "fp16", "bf16"]), math_=st.sampled_from(["dtype", "fp64"]),
       peaks=peaks_dicts(), time_us=st.floats(10.0, 1e5))
def test_gpu_chains_are_judged_against_their_own_packed_or_fp64_roof(dtype, math_, peaks, time_us):
    row = _core.judge_row("fma_chain", "gpu", GPU_INFO, dtype, {"math": math_, "workers": 132, "iters": 4096},
                          time_us, peaks)
    arithmetic = "fp64 vector" if math_ == "fp64" else f"{dtype} vector"
    assert row["peak_compute_arithmetic"] == arithmetic
    roof, source = _expected_roof(peaks, arithmetic)
    assert row["peak_gflops"] == roof and row["peak_compute_source"].startswith(source)
    # A packed FMA is two: 4 FLOPs per lane pair per step.
    per = 2 if math_ == "fp64" or dtype == "fp32" else 4
    assert row["flops"] == 132 * 256 * 4096 * 8 * per
    # The GPU's other kernels compute FP16 and BF16 data in FP32.
    other = _core.judge_row("layernorm", "gpu", GPU_INFO, dtype, {"rows": 64, "cols": 256}, time_us, peaks)
    assert other["peak_compute_arithmetic"] == "fp32 vector"
