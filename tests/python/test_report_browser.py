"""The HTML report opened in a real headless browser (Debian's chromium over the DevTools
protocol, tests/python/browser.py): it loads with no console error and no network request, the
roofline holds one point per row with FLOPs, a hover shows the row's kernel and GB/s, the filters,
the memory level and the sorting work, a screenshot is not blank; bad input and 10,000 rows."""
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import bwprof
from bwprof import roofline as rl

pytest.importorskip("plotly", reason="plotly is not installed (make test installs it: pip install plotly)")
from browser import Browser, find_chromium  # noqa: E402

pytestmark = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (make test's set-up "
                                "installs it: apt-get install chromium)")


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def _points(b, div):
    """(points plotted in the chart's row traces, SVG point elements drawn for them)."""
    return b.eval(f"""(function () {{
        window.bwprofReport.drawAll();
        var gd = document.getElementById({json.dumps(div)});
        var data = gd.data.filter(function (t) {{ return t.meta && t.meta.points; }});
        var n = data.reduce(function (s, t) {{ return s + t.x.length; }}, 0);
        var svg = Array.prototype.filter.call(gd.querySelectorAll('.scatterlayer .trace'), function (g) {{
            var d = g.__data__ && g.__data__[0] && g.__data__[0].trace; return d && d.meta && d.meta.points;
        }}).reduce(function (s, g) {{ return s + g.querySelectorAll('path.point').length; }}, 0);
        return [n, svg, data.map(function (t) {{ return t.type; }})];
    }})()""")


def _hover(b, div, trace=0, point=0):
    """Move the mouse onto a row's point; returns (row index, tooltip text)."""
    # Five tries of a second each, the point located again each time: on a loaded machine the
    # page may still be scrolling or laying out when the first move lands.
    for _ in range(5):
        pos = b.eval(f"""(function () {{
            window.bwprofReport.drawAll();
            var gd = document.getElementById({json.dumps(div)});
            gd.scrollIntoView({{block: 'center'}});
            var t = gd.data.filter(function (t) {{ return t.meta && t.meta.points; }})[{trace}];
            var L = gd._fullLayout, r = gd.getBoundingClientRect();
            return [r.left + L.xaxis._offset + L.xaxis.c2p(t.x[{point}]), r.top + L.yaxis._offset + L.yaxis.c2p(t.y[{point}]),
                    t.customdata[{point}]];
        }})()""")
        b.mouse_move(pos[0] - 30, pos[1] - 30)
        b.mouse_move(pos[0], pos[1])
        for _ in range(10):
            tip = b.eval("(function () { var t = document.getElementById('bwprof-tooltip'); "
                         "return t && t.style.display === 'block' ? [Number(t.getAttribute('data-row')), t.innerText] : null; })()")
            if tip:
                return tip
            time.sleep(0.1)
    raise AssertionError(f"no tooltip after moving onto {div}'s point {pos}")


def _gbs_in(text):
    m = re.search(r"([0-9.]+(?:e[+-]?\d+)?) (GB/s|TB/s)", text)
    assert m, text
    return float(m.group(1)) * (1000 if m.group(2) == "TB/s" else 1)


def _check_clean(b, path):
    assert b.eval("window.bwprofReport.ready") is True, b.eval("window.bwprofReport.errors")
    assert b.console_errors() == []
    assert b.requests() == [path.resolve().as_uri()]  # the file itself, nothing else


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    """A real CPU bench run (stream and gemm, fp32 and fp16) with its report.html."""
    out = tmp_path_factory.mktemp("bench")
    r = subprocess.run([sys.executable, "-m", "bwprof", "bench", "--device", "cpu", "--quick", "--kernels", "stream",
                        "gemm", "--dtypes", "fp32", "fp16", "--no-progress", "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (folder,) = out.iterdir()
    return folder


def test_a_bench_report_loads_clean_with_a_point_per_row(browser, bench_run, tmp_path):
    path = bench_run / "report.html"
    browser.open(path)
    _check_clean(browser, path)
    # the charts below the first screen are drawn when they come near it
    assert browser.eval("!!document.getElementById('roofline-plot').data") is True
    assert browser.eval("!!document.getElementById('dtype-plot').data") is False
    browser.eval("document.getElementById('dtype-plot').scrollIntoView()")
    for _ in range(50):
        if browser.eval("!!document.getElementById('dtype-plot').data"):
            break
        time.sleep(0.1)
    assert browser.eval("!!document.getElementById('dtype-plot').data") is True
    browser.eval("window.scrollTo(0, 0)")
    df = rl.split_sweep(bwprof.results.results_table(bwprof.load_run(bench_run)))[0].reset_index(drop=True)
    on_roof = (df["flops"] > 0) & (df["gflops"] > 0) & (df["intensity_flop_per_byte"] > 0)
    n, svg, types = _points(browser, "roofline-plot")
    assert n == svg == int(on_roof.sum()) > 0 and set(types) == {"scatter"}
    n, svg, _ = _points(browser, "size-plot")
    assert n == svg == int(((df["bytes_read"] + df["bytes_written"] > 0) & (df["bandwidth_gbs"] > 0)).sum())
    assert "stream_copy" in browser.eval("document.getElementById('off-chart').innerText")  # no FLOPs: listed
    for div in ("roofline-plot", "size-plot"):
        row, text = _hover(browser, div, trace=1)
        assert df.loc[row, "kernel"] in text and df.loc[row, "dtype"] in text
        assert _gbs_in(text) == pytest.approx(df.loc[row, "bandwidth_gbs"], rel=0.006)  # 3 digits shown
        assert f"bound: {df.loc[row, 'bound']}" in text
    browser.eval("window.bwprofReport.drawAll()")
    shot = browser.screenshot(tmp_path / "page.png", full_page=True)
    from matplotlib.image import imread
    img = imread(shot)
    assert shot.stat().st_size > 50_000 and img.shape[0] > 2000 and float(img[..., :3].std()) > 0.05


def test_filters_colour_and_sorting(browser, bench_run):
    path = bench_run / "report.html"
    browser.open(path)
    df = rl.split_sweep(bwprof.results.results_table(bwprof.load_run(bench_run)))[0]
    on = df[(df["flops"] > 0) & (df["gflops"] > 0)]

    def toggle(what, value):
        browser.eval(f"""(function () {{
            var cb = document.querySelector('fieldset[data-filter={what}] input[value="{value}"]');
            cb.checked = !cb.checked; cb.dispatchEvent(new Event('change')); }})()""")
    toggle("family", "gemm")
    assert _points(browser, "roofline-plot")[0] == int((on["family"] != "gemm").sum())
    toggle("dtype", "fp16")
    assert _points(browser, "roofline-plot")[0] == int(((on["family"] != "gemm") & (on["dtype"] != "fp16")).sum())
    toggle("family", "gemm")
    toggle("dtype", "fp16")
    bound = on["bound"].iloc[0]
    toggle("bound", bound)
    assert _points(browser, "roofline-plot")[0] == int((on["bound"] != bound).sum())
    toggle("bound", bound)
    browser.eval("(function () { var s = document.getElementById('colour-by'); s.value = 'dtype'; "
                 "s.dispatchEvent(new Event('change')); })()")
    names = browser.eval("document.getElementById('roofline-plot').data.filter(function (t) { return t.meta && "
                         "t.meta.points; }).map(function (t) { return t.name; })")
    assert sorted(names) == sorted(set(on["dtype"]))
    assert _points(browser, "roofline-plot")[0] == len(on)
    # the rows table sorts by a column's figures, both ways (a number column largest first)
    col = browser.eval("""(function () {
        var t = document.querySelector('#table-0-rows');
        var heads = Array.prototype.map.call(t.querySelectorAll('th'), function (h) { return h.textContent; });
        return heads.indexOf('bandwidth_gbs'); })()""")
    assert col >= 0
    first = "document.querySelector('#table-0-rows tbody tr').children[%d].textContent" % col
    click = "document.querySelectorAll('#table-0-rows th')[%d].click()" % col
    browser.eval(click)
    assert float(browser.eval(first)) == pytest.approx(df["bandwidth_gbs"].max(), rel=1e-3)
    browser.eval(click)
    assert float(browser.eval(first)) == pytest.approx(df["bandwidth_gbs"].min(), rel=1e-3)
    assert browser.console_errors() == []


def _judged(rows):
    df = rl.classify(pd.DataFrame(rows))
    df["intensity_flop_per_byte"] = df["flops"] / (df["bytes_read"] + df["bytes_written"])
    df["bandwidth_pct_peak"] = 100.0 * df["bandwidth_gbs"] / df["peak_bandwidth_gbs"]
    return df


def _row(kernel, t_us=10.0, nbytes=1e6, flops=1e6, dtype="fp32", **kw):
    return dict({"kernel": kernel, "family": "fam", "variant": "v", "dtype": dtype, "shape": "n=1", "label": "",
                 "device": "cpu", "device_name": "Test CPU", "time_median_us": t_us, "bytes_read": nbytes / 2,
                 "bytes_written": nbytes / 2, "flops": flops, "bandwidth_gbs": nbytes / (t_us * 1e3),
                 "gflops": flops / (t_us * 1e3), "peak_bandwidth_gbs": 100.0, "peak_gflops": 1000.0,
                 "peak_l2_gbs": 400.0, "verified": True}, **kw)


def test_memory_level_moves_points_to_the_counters_intensity(browser, tmp_path):
    rows = [_row(f"k{i}", flops=1e6 * (i + 1), dram_bytes_read=2e6 * (i + 1), dram_bytes_written=1e5)
            for i in range(5)]
    path = bwprof.report(_judged(rows), tmp_path / "levels.html")
    browser.open(path)
    _check_clean(browser, path)
    opts = browser.eval("Array.prototype.map.call(document.querySelectorAll('#memory-level option'), "
                        "function (o) { return o.value; })")
    assert opts == ["declared", "dram"]  # no L2 bytes: no L2 level
    browser.eval("(function () { var s = document.getElementById('memory-level'); s.value = 'dram'; "
                 "s.dispatchEvent(new Event('change')); })()")
    xs = browser.eval("document.getElementById('roofline-plot').data.filter(function (t) { return t.meta && "
                      "t.meta.points; })[0].x")
    assert xs == pytest.approx([1e6 * (i + 1) / (2e6 * (i + 1) + 1e5) for i in range(5)], rel=1e-4)
    row, text = _hover(browser, "roofline-plot")
    assert "DRAM bandwidth roof" in text and f"k{row}" in text


def test_bad_input_pages_load_clean(browser, tmp_path):
    hostile = "</script><img src=http://example.invalid/x.png onerror=alert(1)>"
    cases = {
        "noflops": [_row("a", flops=0.0), _row("b", flops=0.0, dtype="fp16")],
        "nan": [_row("ok"), _row("nan", t_us=float("nan")), _row("inf", flops=float("inf"))],
        "hostile": [_row(hostile), _row("plain")],
        "one": [_row("only")],
    }
    for name, rows in cases.items():
        path = bwprof.report(_judged(rows), tmp_path / f"{name}.html")
        browser.open(path)
        _check_clean(browser, path)
        if name == "noflops":
            assert _points(browser, "roofline-plot")[0] == 0 and _points(browser, "size-plot")[0] == 2
            assert "a, b" in browser.eval("document.getElementById('off-chart').innerText")
        if name == "nan":
            assert _points(browser, "roofline-plot")[0] == 1  # the finite row alone
        if name == "hostile":
            assert browser.eval("document.querySelectorAll('img').length") == 0
            row, text = _hover(browser, "roofline-plot")
            assert hostile.split(">")[0] in text or "plain" in text


def test_model_and_trace_pages(browser, tmp_path, repo_root):
    rep = bwprof.model(ops=[bwprof.Op("norm", "layernorm", {"rows": 16, "cols": 256}, count=3),
                            bwprof.Op("mv", "gemv", {"N": 256, "K": 256}, count=2)], device="cpu", quick=True)
    folder = rep.save(tmp_path, plots=False)
    for src in (folder, rep):
        path = bwprof.report(src, tmp_path / "model.html")
        browser.open(path)
        _check_clean(browser, path)
        assert browser.eval("document.getElementById('verdict').innerText").startswith("step 'step'")
        assert browser.eval("window.bwprofReport.drawAll() > 0 && !!document.getElementById('busy-plot').data")
        titles = browser.eval("Array.prototype.map.call(document.querySelectorAll('section h2'), "
                              "function (h) { return h.textContent; })")
        assert "Ops (every step)" in titles and any(t.startswith("Steps") for t in titles)
        assert _points(browser, "roofline-plot")[0] == 2
    from test_report import _step_folder
    folder, rows = _step_folder(tmp_path / "step")
    path = bwprof.report(folder)
    browser.open(path)
    _check_clean(browser, path)
    assert browser.eval("document.getElementById('verdict').innerText").startswith("host-bound")
    assert browser.eval("document.getElementById('busy-plot').data.length") == 5
    assert _points(browser, "roofline-plot")[0] == 1  # the kernel with FLOPs
    path = bwprof.report(f"{repo_root}/tests/data/traces/rocprofv3_kernel_trace.csv", tmp_path / "trace.html")
    browser.open(path)
    _check_clean(browser, path)
    assert browser.eval("document.getElementById('roofline')") is None  # a trace has no bytes
    assert browser.eval("window.bwprofReport.drawAll() && !!document.getElementById('breakdown-plot-0').data") is True


def _ten_thousand(repo_root):
    rng = np.random.default_rng(7)
    families = ["stream", "gemm", "attention", "kv_cache", "layernorm", "q4_0"]
    n = 10_000
    nbytes = rng.uniform(1e4, 1e9, n)
    flops = np.where(rng.uniform(size=n) < 0.2, 0.0, nbytes * rng.uniform(0.01, 100, n))
    t = nbytes / rng.uniform(50, 3000, n) / 1e3
    rows = pd.DataFrame({"kernel": [f"{families[i % 6]}_{i % 37}" for i in range(n)],
                         "family": [families[i % 6] for i in range(n)], "variant": "v",
                         "dtype": rng.choice(["fp32", "fp16", "bf16"], n), "shape": [f"n={i}" for i in range(n)],
                         "label": "", "device": "gpu:0", "device_name": "Synthetic GPU", "time_median_us": t,
                         "bytes_read": nbytes / 2, "bytes_written": nbytes / 2, "flops": flops,
                         "bandwidth_gbs": nbytes / (t * 1e3), "gflops": flops / (t * 1e3),
                         "peak_bandwidth_gbs": 4000.0, "peak_gflops": 60000.0, "peak_l2_gbs": 12000.0,
                         "verified": True})
    return _judged(rows.to_dict("records"))


@pytest.mark.serial
def test_ten_thousand_rows_stay_under_10_mb_and_load_in_3_s(browser, tmp_path, repo_root):
    df = _ten_thousand(repo_root)
    small = bwprof.report(_judged([_row("warm")]), tmp_path / "warm.html")
    browser.open(small)  # the browser's own start-up is not the page's
    path = bwprof.report(df, tmp_path / "big.html")
    size = path.stat().st_size
    assert size < 10e6, f"{size / 1e6:.2f} MB"
    seconds = browser.open(path)
    _check_clean(browser, path)
    with_flops = int(((df["flops"] > 0) & (df["gflops"] > 0)).sum())
    t0 = time.monotonic()
    n, _, types = _points(browser, "roofline-plot")  # draws the rest too
    rest = time.monotonic() - t0
    assert n == with_flops
    assert _points(browser, "size-plot")[0] == len(df)
    timing = browser.eval("JSON.stringify([window.bwprofReport.timing, window.bwprofReport.drawn])")
    said = (f"loaded in {seconds:.2f} s (the first screen; the other charts draw when scrolled to), {browser.last_load_cpu_s:.2f} s of the browser's CPU time "
            f"({size / 1e6:.2f} MB; phases in ms: {timing}; WebGL: {browser.eval('window.bwprofReport.webgl')}, "
            f"traces {set(types)}; the other charts {rest:.2f} s more; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(said)
    # A speed target belongs to a benchmark (benchmarks/report_load.py measures it on a quiet
    # machine); here the wall time is held to it only when the machine is not busier than its
    # cores, where a shared machine's contention cannot decide it.
    if os.getloadavg()[0] < (os.cpu_count() or 1):
        assert seconds < 3.0, said
    row, text = _hover(browser, "roofline-plot")
    assert df.iloc[row]["kernel"] in text
