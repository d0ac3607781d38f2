"""Every chart writes a PNG and an SVG that show something: several colours, the expected bars and
points on the Figure's axes, and labels that do not overlap."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.image import imread
from matplotlib.patches import Rectangle, Wedge
from matplotlib.text import Text

import bwprof
import bwprof.plots as plots
import bwprof.roofline as rl
import bwprof.traces as traces

BW, FL = 100.0, 1000.0
DEVICE = "Test GPU 9000"


def _row(kernel, family, dtype, label, shape, time_us, nbytes, flops, **kw):
    t = time_us * 1e-6
    r = {"kernel": kernel, "family": family, "variant": "ref", "dtype": dtype, "label": label, "shape": shape,
         "device": "gpu:0", "device_name": DEVICE, "time_median_us": time_us, "bytes_read": nbytes * 0.75,
         "bytes_written": nbytes * 0.25, "flops": flops, "bandwidth_gbs": nbytes / t / 1e9,
         "gflops": flops / t / 1e9, "intensity_flop_per_byte": flops / nbytes,
         "peak_bandwidth_gbs": BW, "peak_bandwidth_source": "measured:stream_triad", "peak_gflops": FL,
         "theoretical_bandwidth_gbs": 120.0, "above_peak": False}
    r.update(kw)
    return r


def synthetic():
    """3 families, 7 configurations, each in FP32 and FP16 (FP16 moves half the bytes)."""
    rows = []
    configs = [
        ("stream_copy", "stream", "stream 64 MiB", "n=16777216", 0.0, 200e6, 2500.0),
        ("stream_triad", "stream", "stream 64 MiB", "n=16777216", 2 * 16777216, 200e6, 2600.0),
        ("gemm", "gemm", "decode", "M=1,N=896,K=896", 2 * 896 * 896, 3.2e6, 60.0),
        ("gemm", "gemm", "prefill", "M=32,N=896,K=896", 2 * 32 * 896 * 896, 3.5e6, 90.0),
        ("gemm", "gemm", "prefill", "M=128,N=896,K=896", 2 * 128 * 896 * 896, 4.5e6, 200.0),
        ("attention", "attention", "decode kv=1024", "seq_kv=1024", 2 * 14 * 1024 * 64 * 2, 0.6e6, 40.0),
        ("attention", "attention", "encoder", "seq_q=64", 4 * 24 * 64 * 64 * 32, 0.8e6, 70.0),
    ]
    for kernel, fam, label, shape, flops, nbytes, t in configs:
        rows.append(_row(kernel, fam, "fp32", label, shape, t, nbytes, flops))
        rows.append(_row(kernel, fam, "fp16", label, shape, t * 0.6, nbytes / 2, flops))
    df = pd.DataFrame(rows)
    df.loc[0, "time_median_us"] = 1000.0           # a copy at 200 GB/s: above the 120 GB/s datasheet
    df.loc[0, "bandwidth_gbs"] = 200.0
    df.loc[0, "above_peak"] = True
    return df


def assert_picture(png, min_colors=4):
    """The PNG is a real chart: several distinct colours over a good share of its pixels."""
    img = imread(str(png))
    px = (img[::2, ::2, :3] * 255).astype(np.uint32).reshape(-1, 3)
    _, counts = np.unique((px[:, 0] << 16) | (px[:, 1] << 8) | px[:, 2], return_counts=True)
    assert (counts > 10).sum() >= min_colors, f"{png}: only {(counts > 10).sum()} colours"
    not_white = (px.min(axis=1) < 240).mean()
    assert not_white > 0.02, f"{png}: {not_white:.1%} of the pixels are not white"


def assert_files(tmp_path, stem):
    for ext in (".png", ".svg"):
        f = tmp_path / (stem + ext)
        assert f.exists() and f.stat().st_size > 2000, f
    assert (tmp_path / (stem + ".svg")).read_text().lstrip().startswith("<?xml")
    assert_picture(tmp_path / (stem + ".png"))


def bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def points(ax):
    return sum(len(c.get_offsets()) for c in ax.collections
               if isinstance(c, PathCollection) and c.get_gid() == plots.POINTS_GID)


def test_fp32_vs_fp16_panels_bars_speedups_and_table(tmp_path):
    df = synthetic()
    fig = plots.fp32_vs_fp16(df, path=tmp_path / "cmp.png")
    assert_files(tmp_path, "cmp")
    panels = [ax for ax in fig.axes if ax.get_title() in ("stream", "gemm", "attention")]
    assert [ax.get_title() for ax in panels] == ["stream", "gemm", "attention"]
    assert [len(bars(ax)) for ax in panels] == [4, 6, 4]          # two bars per configuration
    assert all("GB/s" in ax.get_ylabel() for ax in panels)
    gemm = panels[1]
    # equal labels are told apart by the parameter that differs
    assert [t.get_text() for t in gemm.get_xticklabels()] == ["decode", "prefill M=32", "prefill M=128"]
    speedups = [t.get_text() for t in gemm.texts if t.get_text().startswith("\u00d7")]
    assert speedups == ["\u00d71.67"] * 3                          # 1 / 0.6, FP32 time / FP16 time
    # the copy above the datasheet peak is hatched
    assert [b.get_hatch() for b in bars(panels[0])].count("///") == 1
    # the measured peak is a line on the stream panel
    assert any(abs(line.get_ydata()[0] - BW) < 1e-9 for line in panels[0].lines)
    assert DEVICE in fig._suptitle.get_text()
    table = plots.comparison_table(df)
    assert table["operation"].tolist() == ["stream", "gemm", "attention", "all"]
    # stream: the copy's FP32 time was set to 1000 us (FP16 1500 us), the triad's ratio is 1/0.6
    stream = (1000 / 1500 * 1 / 0.6) ** 0.5
    assert table["fp16_speedup"].tolist()[:3] == pytest.approx([stream, 1 / 0.6, 1 / 0.6])
    fp32 = df[(df.family == "gemm") & (df.dtype == "fp32")]["bandwidth_gbs"].mean()
    assert table.loc[1, "fp32_bandwidth_gbs"] == pytest.approx(fp32)


def test_fp32_vs_fp16_needs_rows():
    with pytest.raises(plots.NoData):
        plots.fp32_vs_fp16(synthetic().assign(dtype="bf16"))
    with pytest.raises(ValueError, match="DataFrame"):
        plots.fp32_vs_fp16("results.csv")


def synthetic3():
    """synthetic() plus BF16 rows: FP16's bytes, 0.5x FP32's time (so BF16/FP32 = 2, BF16/FP16 = 1.2)."""
    df = synthetic()
    bf = df[df.dtype == "fp16"].copy()
    bf["dtype"] = "bf16"
    bf["time_median_us"] = df[df.dtype == "fp32"]["time_median_us"].to_numpy() * 0.5
    bf["bandwidth_gbs"] = bf["bandwidth_gbs"] * 1.2
    return pd.concat([df, bf], ignore_index=True)


def test_compare_dtypes_three_dtypes_bars_speedups_and_table(tmp_path):
    df = synthetic3()
    fig = plots.compare_dtypes(df, path=tmp_path / "cmp3.png")
    assert_files(tmp_path, "cmp3")
    panels = [ax for ax in fig.axes if ax.get_title() in ("stream", "gemm", "attention")]
    assert [len(bars(ax)) for ax in panels] == [6, 9, 6]          # three bars per configuration
    gemm = panels[1]
    speedups = sorted(t.get_text() for t in gemm.texts if t.get_text().startswith("\u00d7"))
    assert speedups == ["\u00d71.67"] * 3 + ["\u00d72.00"] * 3   # FP16 and BF16 over FP32, one per bar
    assert "FP32 vs FP16 vs BF16" in fig._suptitle.get_text()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["FP32", "FP16", "BF16"]
    table = plots.comparison_table(df)
    assert list(table.columns) == ["operation", "configs", "fp32_bandwidth_gbs", "fp16_bandwidth_gbs",
                                   "bf16_bandwidth_gbs", "fp16_speedup", "bf16_speedup"]
    assert table["bf16_speedup"].tolist()[1:3] == pytest.approx([2.0, 2.0])
    # another baseline: speed-ups over FP16
    t16 = plots.comparison_table(df, baseline="fp16")
    assert "fp16_speedup" not in t16 and t16["bf16_speedup"].tolist()[1] == pytest.approx(1.2)
    assert t16["fp32_speedup"].tolist()[1] == pytest.approx(0.6)
    # a chosen pair: FP16 against BF16 only
    fig2 = plots.compare_dtypes(df, dtypes=["fp16", "bf16"])
    assert [len(bars(ax)) for ax in fig2.axes if ax.get_title() == "gemm"] == [6]


def test_compare_dtypes_bad_arguments():
    df = synthetic3()
    with pytest.raises(plots.NoData):
        plots.compare_dtypes(df[df.dtype == "bf16"])                # one dtype: nothing to compare
    with pytest.raises(plots.NoData, match="int8"):
        plots.compare_dtypes(df, dtypes=["fp32", "int8"])
    with pytest.raises(ValueError, match="baseline"):
        plots.compare_dtypes(df, dtypes=["fp32", "fp16"], baseline="bf16")
    with pytest.raises(ValueError, match="dtypes"):
        plots.comparison_table(df, dtypes=["fp32", "fp32"])
    with pytest.raises(ValueError, match="dtypes"):
        plots.comparison_table(df, dtypes=[])


def test_roofline_points_roofs_ridges_and_sweep(tmp_path):
    df = synthetic()
    ceil = rl.ceilings({"fp32": {"bandwidth_gbs": BW, "gflops": FL, "bandwidth_theoretical_gbs": 120.0},
                        "fp16": {"bandwidth_gbs": BW, "gflops": 2 * FL}},
                       info={"fp16_matrix_gflops_theoretical": 8000.0})
    sweep = pd.DataFrame({"kernel": "intensity_sweep", "dtype": "fp32",
                          "intensity_flop_per_byte": 2.0 ** np.arange(-2, 10)})
    sweep["gflops"] = 0.8 * rl.attainable(sweep["intensity_flop_per_byte"], BW, FL)
    fig = plots.roofline(df, ceilings=ceil, sweep=sweep, path=tmp_path / "roof")
    assert_files(tmp_path, "roof")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "FLOP/byte" in ax.get_xlabel() and "GFLOP/s" in ax.get_ylabel()
    assert DEVICE in ax.get_title(loc="left")
    assert points(ax) == len(df) - 2                     # the two copies have no FLOPs
    roofs = sorted(line.get_label() for line in ax.lines if line.get_gid() == plots.ROOF_GID)
    # fp32's datasheet bandwidth over its measured compute; fp16's datasheet matrix roof over its
    # measured bandwidth; no fp16 vector datasheet figure, so no dashed fp16 vector roof
    assert roofs == ["fp16 matrix theoretical", "fp16 vector measured", "fp32 vector measured",
                     "fp32 vector theoretical"]
    styles = {line.get_label(): line.get_linestyle() for line in ax.lines if line.get_gid() == plots.ROOF_GID}
    assert styles["fp32 vector measured"] == "-" and styles["fp16 matrix theoretical"] == "--"
    assert sum(line.get_gid() == plots.SWEEP_GID for line in ax.lines) == 1
    ridges = [t.get_text() for t in ax.texts if t.get_text().startswith("ridge")]
    assert sorted(ridges) == sorted(["ridge 10 FLOP/B", "ridge 8.33 FLOP/B", "ridge 20 FLOP/B", "ridge 80 FLOP/B"])
    labels = [t.get_text() for t in ax.texts if t.get_gid() == plots.POINT_LABEL_GID]
    assert len(labels) == points(ax) and "gemm decode" in labels and "stream_triad 64 MiB" in labels
    assert any("stream_copy \u00d72" in t.get_text() for t in fig.texts)   # listed, not silently dropped
    # the sweep rows may also come inside the results
    fig2 = plots.roofline(pd.concat([df, sweep]), ceilings=ceil)
    assert sum(line.get_gid() == plots.SWEEP_GID for line in fig2.axes[0].lines) == 1
    assert points(fig2.axes[0]) == len(df) - 2


def test_forty_point_labels_do_not_overlap():
    rng = np.random.default_rng(7)
    n = 40
    intensity = np.geomspace(0.3, 30, n) * rng.uniform(0.8, 1.25, n)
    gflops = np.minimum(FL, intensity * BW) * rng.uniform(0.05, 0.9, n)
    fams = ["gemm", "attention", "layernorm", "q4_0", "bias_act"]
    df = pd.DataFrame({
        "kernel": [fams[i % 5] for i in range(n)], "family": [fams[i % 5] for i in range(n)],
        "dtype": ["fp32" if i % 2 else "fp16" for i in range(n)],
        "label": [f"config {i}" + (" long name" if i % 3 == 0 else "") for i in range(n)],
        "intensity_flop_per_byte": intensity, "gflops": gflops, "flops": 1e9,
        "peak_bandwidth_gbs": BW, "peak_gflops": FL, "device_name": DEVICE,
    })
    fig = plots.roofline(df)
    ax = fig.axes[0]
    assert points(ax) == n
    fig.canvas.draw()  # annotations find their places when drawn
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts if t.get_gid() == plots.POINT_LABEL_GID]
    assert len(boxes) == n
    boxes += [Text.get_window_extent(t, renderer) for t in ax.texts if t.get_gid() == plots.RIDGE_LABEL_GID]
    assert len(boxes) == n + 1
    axbox = ax.get_window_extent(renderer)
    for i, a in enumerate(boxes):
        assert axbox.x0 - 1 <= a.x0 and a.x1 <= axbox.x1 + 1 and axbox.y0 - 1 <= a.y0 and a.y1 <= axbox.y1 + 1
        for b in boxes[i + 1:]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert w <= 0.5 or h <= 0.5, f"labels overlap: {a} {b}"


def test_time_breakdown_bars_and_pie_from_a_trace(tmp_path, repo_root):
    data = os.path.join(repo_root, "tests", "data", "traces")
    trace = pd.concat([traces.read(os.path.join(data, f))
                       for f in ("pytorch_trace.json", "rocprofv3_kernel_trace_rocm7.csv")], ignore_index=True)
    bd = traces.breakdown(trace)
    fig = plots.time_breakdown(bd, path=tmp_path / "tb")     # category / total_time_ns found by name
    assert_files(tmp_path, "tb")
    ax = fig.axes[0]
    assert len(bars(ax)) == len(bd)
    assert ax.get_yticklabels()[0].get_text() == bd["category"].iloc[0]  # the largest on top
    assert "(us)" in ax.get_xlabel() or "(ms)" in ax.get_xlabel()
    # the raw trace works too: rows of one category are summed
    raw = plots.time_breakdown(traces.categorize(trace), time="duration_ns")
    widths = sorted(b.get_width() for b in bars(raw.axes[0]))
    assert widths == pytest.approx(sorted(bd["total_time_ns"] / 1e3))  # microseconds
    pie = plots.time_breakdown(bd, kind="pie", path=tmp_path / "pie")
    assert_files(tmp_path, "pie")
    wedges = [p for p in pie.axes[0].patches if isinstance(p, Wedge)]
    big = (bd["pct_gpu_time"] >= 2).sum() + (1 if (bd["pct_gpu_time"] < 2).sum() > 1 else
                                            (bd["pct_gpu_time"] < 2).sum())
    assert len(wedges) == big


def test_time_breakdown_errors():
    with pytest.raises(ValueError, match="no column 'category'"):
        plots.time_breakdown(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="no time column"):
        plots.time_breakdown(pd.DataFrame({"category": ["a"], "n": [1]}))
    with pytest.raises(ValueError, match="kind"):
        plots.time_breakdown(pd.DataFrame({"category": ["a"], "time_ns": [1]}), kind="donut")


def test_peak_bandwidth_from_a_peaks_dict_and_from_results(tmp_path):
    p = {"bandwidth_gbs": 2900.0, "bandwidth_source": "measured:stream_triad", "bandwidth_theoretical_gbs": 3350.0,
         "bandwidth_by_kernel": {"stream_copy": 2800.0, "stream_scale": 2790.0, "stream_add": 2880.0,
                                 "stream_triad": 2900.0, "stream_dot": 2500.0}}
    fig = plots.peak_bandwidth(p, device_name="NVIDIA H100 80GB HBM3", path=tmp_path / "peak")
    assert_files(tmp_path, "peak")
    ax = fig.axes[0]
    assert len(bars(ax)) == 5
    assert "H100" in ax.get_title(loc="left") and "GB/s" in ax.get_ylabel()
    assert sorted(round(line.get_ydata()[0]) for line in ax.lines) == [2900, 3350]
    assert [b.get_linewidth() for b in bars(ax)].count(1.5) == 1   # the best one is outlined
    fig = plots.peak_bandwidth(synthetic())
    assert len(bars(fig.axes[0])) == 4                           # 2 stream kernels x 2 dtypes


def test_plot_all_skips_charts_without_data(tmp_path):
    gemm32 = synthetic().query("family == 'gemm' and dtype == 'fp32'")
    paths = plots.plot_all(gemm32, tmp_path)
    # one dtype: nothing to compare; no stream rows: no bandwidth chart
    assert sorted(p.name for p in paths) == ["roofline.png", "roofline.svg", "time_breakdown.png",
                                             "time_breakdown.svg"]
    with pytest.raises(plots.NoData):
        plots.peak_bandwidth(gemm32)


def test_importing_and_drawing_leaves_pyplot_alone(repo_root):
    code = ("import sys, bwprof, bwprof.plots as p, pandas as pd\n"
            "p.time_breakdown(pd.DataFrame({'category': ['a', 'b'], 'time_ns': [1, 2]}))\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(repo_root, "python"))
    env.pop("MPLBACKEND", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_plot_command_on_a_saved_run(tmp_path, repo_root, monkeypatch, capsys):
    df = synthetic()
    folder = bwprof.save_run(df, tmp_path / "runs")
    env = dict(os.environ, PYTHONPATH=os.path.join(repo_root, "python"))
    out = tmp_path / "plots"
    r = subprocess.run([sys.executable, "-m", "bwprof", "plot", str(folder), "--out", str(out)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    printed = r.stdout.split()
    assert len(printed) == 8 and all(os.path.exists(p) for p in printed)
    assert str(out / "roofline.png") in printed
    # the CSV and the JSON report load the same rows; by default the charts go beside them
    from bwprof import cli
    seen = []
    monkeypatch.setattr(plots, "plot_all", lambda d, o: seen.append((len(d), o)) or [o / "x.png"])
    for src in (folder / "results.csv", folder / "bandwidth_report.json"):
        assert cli.main(["plot", str(src)]) == 0
    assert seen == [(len(df), folder), (len(df), folder)]
    assert cli.main(["plot", str(tmp_path / "nothing")]) == 2
    assert "no bwprof run" in capsys.readouterr().err


def test_bench_keeps_its_results_when_plotting_fails(tmp_path, monkeypatch, capsys):
    from bwprof import cli

    def broken(df, folder):
        raise RuntimeError("no fonts today")

    monkeypatch.setattr(plots, "plot_all", broken)
    rc = cli.main(["bench", "--device", "cpu", "--quick", "--kernels", "stream_triad", "--no-progress",
                   "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "plots: not drawn (RuntimeError: no fonts today)" in out
    (run,) = tmp_path.iterdir()
    assert len(pd.read_csv(run / "results.csv")) == 2


def test_bench_draws_its_charts_and_prints_their_paths(tmp_path, capsys):
    from bwprof import cli
    rc = cli.main(["bench", "--device", "cpu", "--quick", "--kernels", "stream", "gemm", "layernorm",
                   "--no-progress", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    (run,) = tmp_path.iterdir()
    for name in ("dtype_comparison", "roofline", "peak_bandwidth", "time_breakdown"):
        assert f"plot:    {run / name}.png" in out
        assert (run / f"{name}.svg").stat().st_size > 2000
        assert_picture(run / f"{name}.png")
    assert out.rstrip().splitlines()[-1] == f"run folder: {run}"


def test_subpackages_are_attributes_of_bwprof_imported_on_first_use(repo_root):
    # `import bwprof` alone loads no matplotlib; bwprof.plots / .traces / .baseline work as attributes
    # (as the docs write them) without an explicit import of the subpackage.
    code = ("import sys, bwprof\n"
            "assert 'matplotlib' not in sys.modules\n"
            "assert callable(bwprof.plots.plot_all) and callable(bwprof.traces.read)\n"
            "assert bwprof.baseline.BaselineError is not None\n"
            "try:\n    bwprof.no_such_thing\nexcept AttributeError as e:\n    assert 'no_such_thing' in str(e)\n"
            "else:\n    raise SystemExit('no AttributeError')\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(repo_root, "python"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
