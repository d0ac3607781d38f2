"""The HTML report's data, checked against formulas and the rows it came from (no browser here:
test_report_browser.py opens the pages), its bad input, the CLI, and the notebook displays."""
import json
import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import bwprof
from bwprof import display, roofline as rl
from bwprof.html import kinds, page, sections

pytest.importorskip("plotly", reason="plotly is not installed (make test installs it: pip install plotly)")


def _row(kernel="k", family="fam", dtype="fp32", t_us=10.0, nbytes=1e6, flops=1e6, bw=100.0, fl=1000.0, **kw):
    """A results row judged by the core itself (so every derived column is the core's)."""
    return dict({"kernel": kernel, "family": family, "variant": "v", "dtype": dtype, "shape": f"n={int(nbytes)}",
                 "label": "", "device": "cpu", "device_name": "Test CPU", "time_median_us": t_us,
                 "bytes_read": nbytes / 2, "bytes_written": nbytes / 2, "flops": flops,
                 "bandwidth_gbs": nbytes / (t_us * 1e3), "gflops": flops / (t_us * 1e3),
                 "peak_bandwidth_gbs": bw, "peak_gflops": fl, "peak_compute_source": "measured:fma",
                 "peak_bandwidth_source": "measured:stream", "verified": True}, **kw)


def _judged(rows):
    """The rows with the core's judgement (classify) and the two rates a measured row carries."""
    df = rl.classify(pd.DataFrame(rows))
    df["intensity_flop_per_byte"] = df["flops"] / (df["bytes_read"] + df["bytes_written"])
    df["bandwidth_pct_peak"] = 100.0 * df["bandwidth_gbs"] / df["peak_bandwidth_gbs"]
    return df


def test_rows_payload_holds_each_rows_figures_and_the_cores_judgement():
    df = _judged([_row("a", nbytes=1e6, flops=1e5), _row("b", nbytes=1e5, flops=1e8, t_us=500.0),
                  _row("c", flops=0.0)])
    p = sections.rows_payload(df)
    kern = [p["kernel"]["values"][i] for i in p["kernel"]["codes"]]
    assert kern == ["a", "b", "c"] and p["n"] == 3
    for i, r in df.reset_index(drop=True).iterrows():
        assert p["gbs"][i] == pytest.approx(r["bandwidth_gbs"], rel=1e-4)
        assert p["time_us"][i] == pytest.approx(r["time_median_us"], rel=1e-4)
        assert p["bytes"][i] == pytest.approx(r["bytes_read"] + r["bytes_written"], rel=1e-4)
    lv = p["levels"]["declared"]
    assert list(p["levels"]) == ["declared"]  # no counters: one level
    # a: 0.1 FLOP/B, under the ridge (10 FLOP/B): memory binds; % = gflops / (I x BW)
    assert lv["x"][0] == pytest.approx(0.1)
    assert lv["pct"][0] == pytest.approx(100 * (1e5 / 10e3) / (0.1 * 100.0), rel=1e-3)
    assert lv["roof"]["values"][lv["roof"]["codes"][0]] == "fp32 memory"
    # b: 1000 FLOP/B, past the ridge: the vector roof binds; % = gflops / 1000
    assert lv["pct"][1] == pytest.approx(100 * (1e8 / 500e3) / 1000.0, rel=1e-3)
    assert lv["roof"]["values"][lv["roof"]["codes"][1]] == "fp32 vector"
    # c: no FLOPs: no intensity, its % is of the memory roof (bandwidth_pct_peak)
    assert lv["x"][2] is None
    assert lv["pct"][2] == pytest.approx(100 * 100.0 / 100.0, rel=1e-3)
    bound = [lv["bound"]["values"][i] for i in lv["bound"]["codes"]]
    assert bound == list(df["bound"])


def test_counter_levels_judge_each_row_at_dram_and_l2_bytes():
    rows = [_row("a", nbytes=1e6, flops=4e6, t_us=100.0, peak_l2_gbs=400.0, dram_bytes_read=2e6,
                 dram_bytes_written=0.0, l2_bytes_read=4e6, l2_bytes_written=4e6)]
    p = sections.rows_payload(_judged(rows))
    assert set(p["levels"]) == {"declared", "dram", "l2"}
    gfl = 4e6 / 100e3  # 40 GFLOP/s
    d, l2 = p["levels"]["dram"], p["levels"]["l2"]
    assert d["x"][0] == pytest.approx(4e6 / 2e6)  # FLOPs per DRAM byte
    assert d["pct"][0] == pytest.approx(100 * gfl / min(1000.0, 2.0 * 100.0), rel=1e-3)
    assert d["roof"]["values"][d["roof"]["codes"][0]] == "DRAM bandwidth"
    assert l2["x"][0] == pytest.approx(4e6 / 8e6)
    assert l2["pct"][0] == pytest.approx(100 * gfl / min(1000.0, 0.5 * 400.0), rel=1e-3)
    assert l2["roof"]["values"][l2["roof"]["codes"][0]] == "L2 bandwidth"


def test_roofs_are_the_static_charts_and_follow_the_roofline_formula():
    df = _judged([_row("a"), _row("b", dtype="fp16", bw=200.0, fl=4000.0, peak_l2_gbs=800.0)])
    r = sections.roofline_payload(df)
    got = {(x["dtype"], x["kind"], x["source"]): x for x in r["roofs"]}
    assert got[("fp32", "vector", "measured")]["bandwidth_gbs"] == 100.0
    assert got[("fp16", "vector", "measured")]["gflops"] == 4000.0
    for roof in r["roofs"]:
        x = np.array(roof["x"])
        assert np.allclose(roof["y"], np.minimum(roof["gflops"], x * roof["bandwidth_gbs"]), rtol=1e-4)
    ridges = {(x["dtype"]): x["x"] for x in r["ridges"]}
    assert ridges == {"fp32": pytest.approx(10.0), "fp16": pytest.approx(20.0)}
    assert [lv["name"] for lv in r["levels"]] == ["L2"]
    assert {(c["kind"], c["value"]) for c in r["ceilings"] if c["kind"] == "l2"} == {("l2", 800.0)}


def test_size_lines_follow_t0_plus_bytes_over_bandwidth():
    df = _judged([_row("a")])
    curve = {"lines": [{"pattern": "read", "t0_us": 5.0, "bandwidth_gbs": 50.0, "residual_pct": 1.0,
                        "max_error_pct": 2.0}], "points": [{"kernel": "r", "bytes": 1e6, "time_us": 25.0}]}
    s = sections.size_payload(df, curve)
    (ln,) = s["lines"]
    x = np.array(ln["x"])
    assert np.allclose(ln["y"], x / (5.0 + x / 50e3) / 1e3, rtol=1e-4)
    assert s["points"] == [{"kernel": "r", "bytes": 1e6, "gbs": 40.0}]


def test_dtype_comparison_puts_each_configs_dtypes_side_by_side():
    rows = [_row("k", dtype="fp32", t_us=10.0), _row("k", dtype="fp16", t_us=5.0)]
    d = sections.dtype_payload(_judged(rows))
    assert d["dtypes"] == ["fp32", "fp16"] and len(d["configs"]) == 1
    assert d["gbs"]["fp32"] == [pytest.approx(100.0)] and d["gbs"]["fp16"] == [pytest.approx(200.0)]
    assert sections.dtype_payload(_judged(rows[:1])) is None  # one dtype: nothing to compare


def test_trace_busy_time_is_the_union_of_kernel_intervals():
    df = pd.DataFrame({"start_ns": [0, 5_000, 20_000], "end_ns": [10_000, 15_000, 30_000]})
    busy, span = kinds._busy_span(df)
    assert busy == pytest.approx(25.0) and span == pytest.approx(30.0)  # microseconds


def test_trace_page_breaks_down_a_real_rocprofv3_trace(repo_root):
    p = kinds.page_of(f"{repo_root}/tests/data/traces/rocprofv3_kernel_trace.csv")
    trace = bwprof.traces.read(f"{repo_root}/tests/data/traces/rocprofv3_kernel_trace.csv")
    by_cat = bwprof.traces.breakdown(trace)
    assert p["kind"] == "trace" and p["rows"] is None
    (b,) = p["breakdowns"]
    assert sum(b["time_us"]) == pytest.approx(by_cat["total_time_ns"].sum() / 1e3, rel=1e-4)
    assert p["busy"] and p["busy"]["parts"][0]["time_us"] <= p["busy"]["total_us"]


def test_page_json_cannot_end_its_script_element():
    text = page._script_json({"k": "</script><script>alert(1)</script><!--"})
    assert "<" not in text
    assert json.loads(text) == {"k": "</script><script>alert(1)</script><!--"}


def test_the_file_loads_nothing_from_outside(tmp_path):
    df = _judged([_row("a")])
    text = bwprof.html.to_html(df)
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_report_of_a_bench_folder_records_its_command_and_device(tmp_path):
    df = bwprof.run_suite(device="cpu", kernels=["stream_copy", "gemv"], dtypes=["fp32"], quick=True, progress=False)
    folder = bwprof.save_run(df, tmp_path)
    meta = json.loads((folder / "rows.jsonl").read_text().splitlines()[0])
    assert meta["command"] == bwprof.results.command_line()
    p = kinds.page_of(folder)
    assert p["meta"]["command"] == meta["command"] and p["meta"]["device"]["id"] == "cpu"
    assert p["meta"]["bwprof_version"] == bwprof.__version__ and p["meta"]["run_created"] == meta["created"]
    out = bwprof.report(folder)
    assert out == folder / "report.html" and out.stat().st_size > 1e6


def test_a_sweep_of_user_code_leads_its_table_with_the_grid(tmp_path):
    df = bwprof.sweep(lambda n: (np.add, np.ones(n, np.float32), np.ones(n, np.float32)), {"n": [1 << 12, 1 << 16]},
                      name="add", device="cpu", repeats=3, min_time_s=0.0)
    p = kinds.page_of(df)
    table = p["tables"][0]
    assert p["title"].startswith("bwprof sweep") and table["columns"][0] == "n"
    assert table["data"][0] == [4096, 65536]
    assert p["rows"]["n"] == 2 and p["rows"]["gbs"] == [sections.num(v) for v in df["bandwidth_gbs"]]


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="run: .*holds no result rows"):
        bwprof.report(pd.DataFrame(columns=bwprof.columns()), tmp_path / "x.html")
    from bwprof.results import RunWriter
    with RunWriter(tmp_path / "runs", {"id": "cpu"}, run_id="empty") as w:
        pass  # a run stopped before its first row: the header lines only
    with pytest.raises(ValueError, match=f"run: {w.path} holds no result rows"):
        bwprof.report(w.path)
    assert not (w.path / "report.html").exists()
    other = tmp_path / "other.csv"
    other.write_text("name,iterations,real_time\nBM_x,100,1.5\n")
    with pytest.raises(ValueError, match="run: .*not a bwprof run.*not a profiler trace"):
        bwprof.report(other, tmp_path / "x.html")
    with pytest.raises(FileNotFoundError, match="run: no such file"):
        bwprof.report(tmp_path / "missing", tmp_path / "x.html")
    with pytest.raises(TypeError, match="run: expected"):
        bwprof.report(42, tmp_path / "x.html")
    with pytest.raises(ValueError, match="path: .* is a folder"):
        bwprof.report(_judged([_row()]), tmp_path)
    assert not (tmp_path / "x.html").exists()


def test_rows_without_flops_and_nan_fields_are_reported_not_dropped():
    rows = [_row("noflop", flops=0.0), _row("nan", t_us=float("nan")), _row("ok")]
    df = _judged(rows)
    df.loc[1, ["bandwidth_gbs", "gflops", "bottleneck"]] = [np.nan, np.nan, np.nan]
    p = kinds.page_of(df)
    assert p["rows"]["n"] == 3
    assert p["rows"]["gbs"][1] is None and p["rows"]["time_us"][1] is None
    assert p["roofline"]["off_chart"] == 2 and "noflop" in p["roofline"]["off_note"]
    json.dumps(p, allow_nan=False)  # no NaN reaches the page


def test_missing_plotly_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "plotly.offline", None)
    with pytest.raises(ImportError, match=r"pip install 'bwprof\[report\]'"):
        bwprof.report(_judged([_row()]), tmp_path / "x.html")
    folder = bwprof.save_run(_judged([_row()]), tmp_path)
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['plotly.offline'] = None; "
                        "from bwprof.cli import main; sys.exit(main(['report', sys.argv[1]]))", str(folder)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "pip install 'bwprof[report]'" in r.stderr and r.stderr.count("\n") == 1
    assert not (folder / "report.html").exists()


def test_cli_report_writes_the_file_and_fails_in_one_line(tmp_path):
    df = _judged([_row("a"), _row("b", dtype="fp16")])
    folder = bwprof.save_run(df, tmp_path)
    out = tmp_path / "sub" / "r.html"
    r = subprocess.run([sys.executable, "-m", "bwprof", "report", str(folder), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out) and out.read_text().startswith("<!DOCTYPE html>")
    r = subprocess.run([sys.executable, "-m", "bwprof", "report", str(tmp_path / "nope")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such file" in r.stderr


def test_bench_writes_report_html_beside_its_charts_but_not_with_no_plots(tmp_path):
    def bench(*extra):
        return subprocess.run([sys.executable, "-m", "bwprof", "bench", "--device", "cpu", "--quick", "--kernels",
                               "stream_copy", "--dtypes", "fp32", "--no-progress", "--out", str(tmp_path), *extra],
                              capture_output=True, text=True, timeout=300)
    r = bench()
    assert r.returncode == 0, r.stderr
    (run,) = tmp_path.iterdir()
    assert (run / "report.html").exists() and (run / "size_ceiling.png").exists()
    assert f"html:    {run / 'report.html'}" in r.stdout
    meta = json.loads((run / "rows.jsonl").read_text().splitlines()[0])
    assert meta["command"].endswith(f"-m bwprof bench --device cpu --quick --kernels stream_copy --dtypes fp32 "
                                    f"--no-progress --out {tmp_path}")
    r = bench("--no-plots")
    assert r.returncode == 0, r.stderr
    (second,) = [p for p in tmp_path.iterdir() if p != run]
    assert not (second / "report.html").exists()


# ---- notebook displays ----------------------------------------------------------------------------

def test_measurement_shows_its_figures_and_verdict_as_html():
    m = bwprof.measure("stream_copy", device="cpu", n=1 << 14, repeats=3, min_time_s=0.0)
    r = m.to_dict()
    h = m._repr_html_()
    assert "stream_copy" in h and f"{r['bandwidth_gbs']:.4g} GB/s" in h and f"{r['time_median_us']:.4g} us" in h
    import html as _html
    assert _html.escape(r["bottleneck"]) in h


def test_model_report_shows_its_verdict_steps_and_ops():
    rep = bwprof.model(ops=[bwprof.Op("norm", "layernorm", {"rows": 8, "cols": 64}, count=2)], device="cpu",
                       quick=True)
    h = rep._repr_html_()
    assert "norm" in h and f"{rep.summary['step_us']:.1f} us whole" in h and "<table" in h


def test_a_saved_model_report_holds_its_html_report(tmp_path):
    rep = bwprof.model(ops=[bwprof.Op("norm", "layernorm", {"rows": 8, "cols": 64}, count=2)], device="cpu",
                       quick=True)
    folder = rep.save(tmp_path)
    assert (folder / "report.html").exists() and (folder / "model_breakdown.png").exists()
    p = kinds.page_of(folder)
    assert p["kind"] == "model" and p["busy"]["total_us"] == pytest.approx(rep.summary["step_us"], rel=1e-4)
    ops = p["tables"][0]
    assert ops["title"] == "Ops (every step)" and ops["n"] == len(rep.ops)
    assert not (rep.save(tmp_path / "np", plots=False) / "report.html").exists()


def test_step_report_html_from_its_summary_and_kernels():
    class Step:
        name = "train"
        summary = {"device": "cpu", "device_name": "Test", "wall_us": 100.0, "busy_us": 60.0, "busy_pct": 60.0,
                   "idle_us": 40.0, "verdict_text": "idle 40 % of the step: the host is the bottleneck"}
        kernels = pd.DataFrame({"kernel": ["mm", "add"], "time_per_step_us": [10.0, 50.0], "bound": ["compute", "memory"]})
    h = display.step_html(Step())
    assert "the host is the bottleneck" in h and "60.0 %" in h and h.index("add") < h.index("mm")  # largest first


def test_progress_is_the_text_bar_outside_a_notebook(capsys):
    assert not display.in_notebook()
    bar = bwprof.suite._Progress(2, True)
    assert bar.notebook is None
    bar.step("one")
    assert "1/2" in capsys.readouterr().err


def _step_folder(tmp_path):
    """A step report's run folder as bwprof.step writes it: the kernel rows (RunWriter) and
    step_report.json (format bwprof-step) with the summary's wall, busy and idle split."""
    from bwprof.results import RunWriter
    rows = _judged([_row("mm", family="", category="GEMM", op="aten::mm", time_per_step_us=30.0, flops=4e6,
                         dram_bytes_read=3e6, dram_bytes_written=1e5),
                    _row("add", family="", category="elementwise", op="aten::add", time_per_step_us=10.0, flops=0.0,
                         dram_bytes_read=1e6, dram_bytes_written=5e5)])
    with RunWriter(tmp_path, {"id": "cpu", "name": "Test CPU"}, run_id="step-test",
                   columns=[str(c) for c in rows.columns]) as w:
        for r in rows.to_dict("records"):
            w.add(r)
    summary = {"device": "cpu", "device_name": "Test CPU", "wall_us": 100.0, "busy_us": 40.0, "busy_pct": 40.0,
               "idle_us": 60.0, "idle_before_first_us": 5.0, "idle_launch_gaps_us": 35.0, "idle_host_wait_us": 15.0,
               "idle_after_last_us": 5.0, "verdict": "host-bound",
               "verdict_text": "host-bound: the GPU is idle 60 % of the step"}
    (w.path / kinds.STEP_JSON).write_text(json.dumps({"format": kinds.STEP_FORMAT, "version": 1, "name": "train",
                                                       "summary": summary, "device": {"id": "cpu"}}))
    return w.path, rows


def test_step_page_from_a_step_run_folder(tmp_path):
    folder, rows = _step_folder(tmp_path)
    p = kinds.page_of(folder)
    assert p["kind"] == "step" and p["verdict"] == "host-bound: the GPU is idle 60 % of the step"
    assert [(x["name"], x["time_us"]) for x in p["busy"]["parts"]] == [
        ("busy (a kernel running)", 40.0), ("idle before the first launch", 5.0), ("idle between launches", 35.0),
        ("idle after host waits", 15.0), ("idle after the last launch", 5.0)]
    assert sum(x["pct"] for x in p["busy"]["parts"]) == pytest.approx(100.0)
    assert set(p["rows"]["levels"]) == {"declared", "dram"}  # counters joined: the DRAM level
    assert p["rows"]["levels"]["dram"]["x"][0] == pytest.approx(4e6 / 3.1e6, rel=1e-4)
    (b,) = p["breakdowns"]
    assert dict(zip(b["groups"], b["time_us"])) == {"GEMM": 30.0, "elementwise": 10.0}
    assert p["tables"][0]["title"].startswith("Kernels")
