"""The step report on the CPU: a step of annotated NumPy regions (rows, units, values against their
formulas, the busy/idle split, verdicts, save/load, charts, the CLI) and bad input."""
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

import bwprof
from bwprof.step.idle import split

N = 1 << 16


def _step(sleep_s=0.0, calls=3):
    a = np.random.default_rng(1).random(N)
    out = np.empty_like(a)

    def step():
        for _ in range(calls):
            with bwprof.region("scale", bytes_read=a.nbytes, bytes_written=out.nbytes, flops=N):
                np.multiply(a, 2.0, out=out)
        with bwprof.region("sum", bytes_read=a.nbytes, bytes_written=0):
            float(a.sum())
        if sleep_s:
            time.sleep(sleep_s)
    return step


@pytest.fixture(scope="module")
def report():
    return bwprof.profile_step(_step(), repeats=3, warmup=1, device="cpu")


def test_rows_hold_the_regions_with_their_declared_traffic(report):
    k = report.kernels.set_index("kernel")
    assert set(k.index) == {"scale", "sum"}
    s = k.loc["scale"]
    assert s["calls_per_step"] == 3 and s["op"] == "bwprof.region" and s["bytes_source"] == "declared"
    assert s["bytes_read"] == 8 * N and s["bytes_written"] == 8 * N and s["flops"] == N
    # rates from the core's judgement: bytes / time, FLOPs / time, per call
    assert s["bandwidth_gbs"] == pytest.approx(16 * N / (s["time_median_us"] * 1e3), rel=1e-9)
    assert s["gflops"] == pytest.approx(N / (s["time_median_us"] * 1e3), rel=1e-9)
    assert s["bandwidth_pct_peak"] == pytest.approx(100 * s["bandwidth_gbs"] / s["peak_bandwidth_gbs"], rel=1e-9)
    assert s["time_per_step_us"] >= 3 * s["time_min_us"] * 0.999
    assert k.loc["sum", "flops_source"] == "unknown" and math.isnan(k.loc["sum", "flops"])
    assert set(k["bound"]) <= {"memory", "compute", "latency", "unknown"}
    shares = report.kernels["time_per_step_us"] / report.summary["wall_us"] * 100
    assert np.allclose(shares, report.kernels["step_share_pct"])


def test_summary_splits_the_wall_time(report):
    s = report.summary
    parts = s["busy_us"] + s["idle_before_first_us"] + s["idle_launch_gaps_us"] + s["idle_host_wait_us"] + \
        s["idle_after_last_us"]
    assert parts == pytest.approx(s["profiled_wall_us"], rel=1e-9)  # the split of the median run
    assert s["launches"] == 4 and s["host_waits"] == 0
    assert 0 < s["busy_pct"] <= 100
    assert s["verdict"] and s["verdict_text"].startswith(s["verdict"])


def test_split_formula():
    # device busy 10-20 and 30-40 of a 0-100 run; the host waited 15-32 and launched the second at 33
    out = split(0, 100_000, [(10_000, 20_000), (30_000, 40_000)], [(15_000, 32_000)], [5_000, 33_000])
    assert out["busy_us"] == 20 and out["idle_before_first_us"] == 10 and out["idle_after_last_us"] == 60
    assert out["idle_host_wait_us"] == 10 and out["idle_launch_gaps_us"] == 0
    # the second launch was queued before the wait ended: a gap between launches, not the wait's
    out = split(0, 100_000, [(10_000, 20_000), (30_000, 40_000)], [(15_000, 32_000)], [5_000, 12_000])
    assert out["idle_host_wait_us"] == 0 and out["idle_launch_gaps_us"] == 10


def test_a_step_mostly_outside_its_regions_is_host_bound():
    r = bwprof.profile_step(_step(sleep_s=0.03, calls=1), repeats=2, warmup=0, device="cpu")
    s = r.summary
    assert s["verdict"] == "host-bound" and s["busy_pct"] < 50
    assert s["verdict_text"].startswith(f"host-bound: the regions take {s['busy_pct']:.1f} % of the ")
    assert "the regions alone take" in s["verdict_text"]
    assert s["idle_after_last_us"] > 25_000


def test_save_and_load(report, tmp_path):
    folder = report.save(tmp_path)
    names = {p.name for p in folder.iterdir()}
    assert {"results.csv", "rows.jsonl", "bandwidth_report.json", "step_report.json", "step_launches.csv",
            "step_roofline.png", "step_time.png", "step_time.svg"} <= names
    doc = json.loads((folder / "step_report.json").read_text())
    assert doc["units"]["time_median_us"] == "microseconds" and doc["units"]["bandwidth_gbs"].startswith("GB/s")
    back = bwprof.load_step(folder)
    cols = ["kernel", "calls_per_step", "time_median_us", "bandwidth_gbs", "bound"]
    assert back.kernels[cols].to_dict("records") == report.kernels[cols].to_dict("records")
    assert back.summary["verdict_text"] == report.summary["verdict_text"]
    assert back.summary["wall_us"] == report.summary["wall_us"]
    with pytest.raises(ValueError, match="not a bwprof step report"):
        bwprof.load_step(tmp_path)


def test_save_writes_the_html_report_and_notebooks_show_the_verdict(report, tmp_path):
    pytest.importorskip("plotly")
    folder = report.save(tmp_path)
    page = (folder / "report.html").read_text()
    assert "<script" in page and report.kernels.iloc[0]["kernel"] in page
    html = report._repr_html_()
    assert report.summary["verdict"] in html and "wall" in html


def test_charts(report, tmp_path):
    from bwprof.plots.step_roofline import step_roofline
    from bwprof.plots.step_time import WALL_GID, step_time
    from bwprof.plots.style import POINTS_GID

    fig = step_roofline(report, tmp_path / "r")
    pts = [c for c in fig.axes[0].collections if c.get_gid() == POINTS_GID]
    assert len(pts) == 1 and len(pts[0].get_offsets()) == 1  # "scale" has FLOPs; "sum" is listed beneath
    fig = step_time(report, tmp_path / "t")
    walls = [c for c in fig.axes[0].collections if c.get_gid() == WALL_GID]
    assert walls and walls[0].get_offsets()[0][0] == pytest.approx(
        report.summary["wall_us"] / (1e3 if sum(report.summary[k] for k in (
            "busy_us", "idle_before_first_us", "idle_launch_gaps_us", "idle_host_wait_us",
            "idle_after_last_us")) >= 2000 else 1))
    assert (tmp_path / "r.png").exists() and (tmp_path / "t.svg").exists()


def test_perfetto_trace(report, tmp_path):
    p = report.to_perfetto(tmp_path / "step.json")
    ev = [e for e in json.loads(p.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(ev) == 4 and {e["name"] for e in ev} == {"scale", "sum"}
    assert all("bandwidth_pct_peak" in e["args"] and e["dur"] > 0 for e in ev)


# ---- bad input -------------------------------------------------------------------------------

def test_not_callable():
    with pytest.raises(TypeError, match="fn: expected a callable"):
        bwprof.profile_step(42)


def test_the_users_exception_propagates_unchanged_with_a_note():
    err = KeyError("mine")

    def step():
        raise err
    with pytest.raises(KeyError) as info:
        bwprof.profile_step(step, device="cpu")
    assert info.value is err
    assert any("bwprof.profile_step" in n for n in getattr(info.value, "__notes__", []))


def test_a_step_that_runs_nothing():
    with pytest.raises(ValueError, match="fn: the step ran no bwprof.region"):
        bwprof.profile_step(lambda: None, device="cpu", warmup=0, repeats=1)


def test_nested_regions():
    def step():
        with bwprof.region("outer", bytes_read=1, bytes_written=1):
            with bwprof.region("inner", bytes_read=1, bytes_written=1):
                pass
    with pytest.raises(ValueError, match="region 'inner': opened inside region 'outer'"):
        bwprof.profile_step(step, device="cpu")


def test_a_region_never_closed():
    def step():
        bwprof.region("left_open", bytes_read=1, bytes_written=1).__enter__()
    with pytest.raises(ValueError, match="region 'left_open': opened in the step and never closed"):
        bwprof.profile_step(step, device="cpu")


@pytest.mark.parametrize("kw, match", [({"bytes_read": -1}, "bytes_read"), ({"flops": "x"}, "flops"),
                                       ({"dtype": "fp8"}, "dtype")])
def test_region_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        bwprof.region("r", **kw)
    with pytest.raises(ValueError, match="name"):
        bwprof.region("")


def test_a_region_outside_a_step_does_nothing():
    with bwprof.region("free", bytes_read=1, bytes_written=1) as r:
        pass
    assert r.name == "free"


@pytest.mark.parametrize("kw, match", [({"repeats": 0}, "repeats"), ({"graph": "maybe"}, "graph"),
                                       ({"counters": "dram"}, "counters: hardware counters"),
                                       ({"counters": "no such set!"}, "counters")])
def test_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        bwprof.profile_step(_step(), device="cpu", **kw)


def test_cli(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("import sys, numpy as np, bwprof\n"
                      "a = np.ones(int(sys.argv[1]))\n"
                      "def step():\n"
                      "    with bwprof.region('fill', bytes_read=0, bytes_written=a.nbytes):\n"
                      "        a.fill(2.0)\n"
                      "bwprof.step_marker(step)\n"
                      "print('after the step', a[0])\n")
    run = subprocess.run([sys.executable, "-m", "bwprof", "step", "--repeats", "2", "--no-plots", "--out",
                          str(tmp_path / "runs"), str(script), "4096"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "after the step 2.0" in run.stdout and "fill" in run.stdout
    folder = run.stdout.strip().splitlines()[-1].split("run folder: ")[1]
    assert bwprof.load_step(folder).kernels["bytes_written"].iloc[0] == 4096 * 8
    (tmp_path / "none.py").write_text("x = 1\n")
    run = subprocess.run([sys.executable, "-m", "bwprof", "step", str(tmp_path / "none.py")],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "marked no step" in run.stderr


def test_a_region_above_its_roof_is_marked_in_the_steps_table():
    x = np.ones(1000)

    def step():
        with bwprof.region("big", bytes_read=1e13, bytes_written=0):
            x.sum()

    r = bwprof.profile_step(step, device="cpu", repeats=2)
    assert r.kernels["above_peak"].all()
    from bwprof import tables
    text = r.text()
    assert tables.ABOVE_PEAK_NOTE in text and "memory!" in text
    assert "!" in r._repr_html_()


def test_kwargs_passes_the_steps_own_keywords_of_bwprofs_names():
    seen = {}

    def step(device="mine", name="mine", repeats=0):
        seen.update(device=device, name=name, repeats=repeats)
        with bwprof.region("r", bytes_read=8, bytes_written=8):
            pass

    r = bwprof.profile_step(step, device="cpu", repeats=2, kwargs={"device": "cuda", "name": "n", "repeats": 9})
    assert seen == {"device": "cuda", "name": "n", "repeats": 9} and r.summary["repeats"] == 2
    with pytest.raises(ValueError, match="both"):
        bwprof.profile_step(step, device="cpu", kwargs={"x": 1}, x=2)
    with pytest.raises(TypeError, match="kwargs"):
        bwprof.profile_step(step, device="cpu", kwargs=5)
