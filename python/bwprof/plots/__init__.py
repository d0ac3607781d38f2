"""Charts for reports: dtype comparisons, the roofline, time breakdowns and peak bandwidth.

Every function returns a matplotlib Figure drawn on the Agg canvas (importing bwprof never
touches pyplot or the user's backend) and, given ``path``, saves ``<stem>.png`` and
``<stem>.svg``. ``plot_all(df, out_dir)`` draws every chart a results DataFrame supports::

    import bwprof, bwprof.plots as plots
    df = bwprof.run_suite(quick=True)
    fig = plots.roofline(df, path="results/roofline")   # results/roofline.png + .svg
    plots.plot_all(df, "results/run1")

One chart kind per module: comparison (compare_dtypes, fp32_vs_fp16, comparison_table), roofline_chart,
breakdown (time_breakdown), peaks (peak_bandwidth), size_chart (size_ceiling) and links
(p2p_heatmap, collective_busbw, transfer_sizes, device_comparison: what crosses links, and a run over
several GPUs), over labels (place_labels), bars (the horizontal-bar helper), style (colours, markers,
artist ids) and figure (Agg figures, saving).
matplotlib is imported only by the functions that draw.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from .. import arguments as _args, roofline as rl
from ..files import ensure_folder
from .breakdown import time_breakdown
from .comparison import compare_dtypes, comparison_table, fp32_vs_fp16
from .figure import NoData, _device_name
from .labels import place_labels
from .links import collective_busbw, device_comparison, p2p_heatmap, transfer_sizes
from .peaks import peak_bandwidth
from .roofline_chart import roofline
from .size_chart import size_ceiling
from .style import (DTYPE_COLORS, FAMILY_MARKERS, LEVEL_GID, POINT_LABEL_GID, POINTS_GID, RIDGE_LABEL_GID,
                    ROOF_GID, SWEEP_GID)


def plot_all(df: pd.DataFrame, out_dir, *, ceilings: pd.DataFrame | None = None, sweep=None,
             device_name=None, size_curve: dict | None = None) -> list[Path]:
    """Every chart ``df`` supports, as PNG and SVG in ``out_dir``; returns the files written.
    A chart without data (e.g. the dtype comparison of a one-dtype run) is skipped. ``size_curve``
    (``bwprof.peaks()["size_curve"]``; by default the one a bench saved in ``out_dir``) adds the
    measured points to the size chart."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"plot_all: expected a pandas DataFrame, got {type(df).__name__}")
    has_cat = "category" in df
    if not has_cat:  # a trace breakdown has categories; anything else must be a results table
        from ..results import results_table
        df = results_table(df, "plot_all")
    out = ensure_folder("out_dir", _args.path("out_dir", out_dir))
    if size_curve is None:
        size_curve = _saved_size_curve(out)
    # The intensity sweep is a measuring instrument, not a workload: keep it out of the time shares.
    kernels_only = rl.split_sweep(df)[0]
    jobs = [
        ("dtype_comparison", lambda p: compare_dtypes(df, p, device_name=device_name)),
        ("roofline", lambda p: roofline(df, ceilings, sweep, p, device_name=device_name)),
        ("peak_bandwidth", lambda p: peak_bandwidth(df, device_name=device_name, path=p)),
        ("size_ceiling", lambda p: size_ceiling(kernels_only, size_curve, p, device_name=device_name)),
        ("time_breakdown", lambda p: time_breakdown(kernels_only, "category" if has_cat else "family",
                                                    None if has_cat else "time_median_us", path=p,
                                                    device_name=device_name,
                                                    title=None if has_cat else
                                                    f"Median kernel time per family on "
                                                    f"{_device_name(df, device_name)} (one run of each)")),
        ("transfers", lambda p: transfer_sizes(df, p, device_name=device_name)),
        ("collectives_busbw", lambda p: collective_busbw(df, p, device_name=device_name)),
        ("p2p_matrix", lambda p: p2p_heatmap(df, p, device_name=device_name)),
        ("devices", lambda p: device_comparison(df, p)),
    ]
    paths = []
    for name, draw in jobs:
        if name == "time_breakdown" and not has_cat and "family" not in df:
            continue
        if name == "size_ceiling" and has_cat:
            continue  # a trace breakdown moves no declared bytes
        try:
            fig = draw(out / name)
        except NoData:
            continue
        paths += getattr(fig, "_bwprof_paths", [])
    return paths


def _cmd_plot(args) -> int:
    from ..files import ensure_folder
    from ..results import load_run, results_table
    src = Path(args.results)
    df = results_table(load_run(src), str(src))
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    ensure_folder("--out", out)
    if not len(df):
        print(f"bwprof: nothing to plot: {src} holds no result rows", file=sys.stderr)
        return 1
    curve = _saved_size_curve(src)
    paths = plot_all(df, out, **({"size_curve": curve} if curve else {}))
    if not paths:
        print(f"bwprof: nothing to plot in {src}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


SIZE_CURVE_FILE = "size_curve.json"  # the device's size curve, saved in a run folder by bench


def _saved_size_curve(src: Path) -> dict | None:
    """The size curve a run folder holds (bench saves it), else None (the size chart then draws the
    fit the rows carry, without the measured points)."""
    import json

    f = (src if src.is_dir() else src.parent) / SIZE_CURVE_FILE
    try:
        d = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def register_cli(subparsers) -> None:
    """Adds ``plot RESULTS [--out DIR]`` to the bwprof CLI."""
    s = subparsers.add_parser("plot", help="draw the charts (dtype comparison, roofline, bandwidth, time) of a run")
    s.add_argument("results", metavar="RESULTS", help="a run folder, its results.csv, rows.jsonl or bandwidth_report.json")
    s.add_argument("--out", metavar="DIR", help="folder for the PNG and SVG files (default: the run folder)")
    s.set_defaults(func=_cmd_plot)


__all__ = ["DTYPE_COLORS", "FAMILY_MARKERS", "LEVEL_GID", "NoData", "POINT_LABEL_GID", "POINTS_GID", "RIDGE_LABEL_GID",
           "ROOF_GID", "SWEEP_GID",
           "collective_busbw", "compare_dtypes", "comparison_table", "device_comparison", "fp32_vs_fp16",
           "p2p_heatmap", "peak_bandwidth", "place_labels", "plot_all", "register_cli", "roofline", "size_ceiling",
           "time_breakdown", "transfer_sizes"]
