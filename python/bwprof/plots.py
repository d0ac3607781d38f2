"""Charts for reports: FP32 vs FP16, the roofline, time breakdowns and peak bandwidth.

Every function returns a matplotlib Figure drawn on the Agg canvas (importing bwprof never
touches pyplot or the user's backend) and, given ``path``, saves ``<stem>.png`` and
``<stem>.svg``. ``plot_all(df, out_dir)`` draws every chart a results DataFrame supports::

    import bwprof, bwprof.plots as plots
    df = bwprof.run_suite(quick=True)
    fig = plots.roofline(df, path="results/roofline")   # results/roofline.png + .svg
    plots.plot_all(df, "results/run1")
"""
from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import roofline as rl

DTYPE_COLORS = {"fp32": "#1f5fa8", "fp16": "#e07b00", "bf16": "#2a9d4b", "int8": "#8e44ad"}
_EXTRA_COLORS = ["#c0392b", "#16a085", "#7f8c8d", "#d35400"]
FAMILY_MARKERS = {"stream": "o", "gemm": "s", "attention": "^", "kv_cache": "v", "q4_0": "D",
                  "layernorm": "P", "bias_act": "X"}
_EXTRA_MARKERS = ["*", "h", "p", "<", ">", "d", "H", "8"]
# Categorical colours for time breakdowns (colour-blind friendly, then the tab20 tail).
_CATEGORY_COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb",
                    "#ee8866", "#44bb99", "#99ddff", "#dddd77", "#ffaabb", "#77aadd", "#eedd88"]
POINT_LABEL_GID = "bwprof-point-label"
POINTS_GID = "bwprof-kernels"      # the kernels' scatter collections on a roofline
ROOF_GID = "bwprof-roof"           # roof lines (their label says dtype, kind, source)
SWEEP_GID = "bwprof-sweep"         # the measured intensity-sweep curve
RIDGE_LABEL_GID = "bwprof-ridge-label"
_DPI = 100          # layout and label placement work in these pixels; saving scales uniformly
_SAVE_DPI = 150


class NoData(ValueError):
    """The DataFrame holds nothing this chart can show (plot_all skips the chart)."""


# ---------------------------------------------------------------------------------------------
# helpers

def _figure(width: float, height: float, layout: str | None = None) -> Figure:
    fig = Figure(figsize=(width, height), dpi=_DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path) -> list[Path]:
    """Save ``fig`` as PNG and SVG beside each other (the suffix of ``path`` is ignored)."""
    if path is None:
        return []
    p = Path(path)
    stem = p.with_suffix("") if p.suffix.lower() in (".png", ".svg", ".pdf") else p
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext in (".png", ".svg"):
        target = stem.parent / (stem.name + ext)
        fig.savefig(target, dpi=_SAVE_DPI, facecolor="white")
        out.append(target)
    fig._bwprof_paths = out  # for callers that want them (plot_all)
    return out


def _color(dtype: str) -> str:
    if dtype not in DTYPE_COLORS:
        DTYPE_COLORS[dtype] = _EXTRA_COLORS[(len(DTYPE_COLORS) - 4) % len(_EXTRA_COLORS)]
    return DTYPE_COLORS[dtype]


def _marker(family: str) -> str:
    if family not in FAMILY_MARKERS:
        FAMILY_MARKERS[family] = _EXTRA_MARKERS[(len(FAMILY_MARKERS) - 7) % len(_EXTRA_MARKERS)]
    return FAMILY_MARKERS[family]


def _device_name(df, given=None) -> str:
    if given:
        return str(given)
    if isinstance(df, pd.DataFrame):
        if df.attrs.get("device_name"):
            return str(df.attrs["device_name"])
        if "device_name" in df and len(df):
            names = df["device_name"].dropna().astype(str)
            names = names[names != ""]
            if len(names):
                name = names.mode().iloc[0]
                if "device" in df:
                    dev = df["device"].dropna().astype(str)
                    if len(dev):
                        name += f" ({dev.mode().iloc[0]})"
                return name
    return "unknown device"


def _fmt_rate(v: float, unit: str) -> str:
    """46.4 GB/s, 1.2 TB/s, 990 TFLOP/s: three significant digits with an SI prefix."""
    if v is None or not np.isfinite(v):
        return "-"
    base = {"GB/s": ("GB/s", "TB/s"), "GFLOP/s": ("GFLOP/s", "TFLOP/s")}[unit]
    if v >= 1000:
        return f"{v / 1000:.3g} {base[1]}"
    return f"{v:.3g} {base[0]}"


def _num(df: pd.DataFrame, col: str, default=np.nan) -> pd.Series:
    if col not in df:
        return pd.Series(default, index=df.index, dtype=float)
    return pd.to_numeric(df[col], errors="coerce")


def _rows(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{what}: expected a pandas DataFrame, got {type(df).__name__}")
    return rl.split_sweep(df)[0]


def _wrap(text: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(str(text), width=width, break_long_words=False)) or str(text)


# ---------------------------------------------------------------------------------------------
# FP32 vs FP16

_CONFIG_KEYS = ["family", "kernel", "variant", "label", "shape"]


def _config_names(cfg: pd.DataFrame) -> list[str]:
    """Readable, unique names for a panel's configurations: the label, plus the kernel when a
    family has several, plus the parameters that tell equal labels apart."""
    several_kernels = cfg["kernel"].nunique() > 1
    base = []
    for r in cfg.itertuples():
        lab = r.label if isinstance(r.label, str) and r.label else ""
        kern = str(r.kernel)
        if several_kernels or not lab:
            short = kern[len(str(r.family)) + 1:] if kern.startswith(f"{r.family}_") else kern
            lab = f"{short} {lab}".strip() if lab and cfg["label"].nunique() > 1 else short if lab else short
        base.append(lab)
    names = list(base)
    for name in set(base):
        idx = [i for i, b in enumerate(base) if b == name]
        if len(idx) < 2:
            continue
        params = [dict(kv.split("=", 1) for kv in str(cfg["shape"].iloc[i]).split(",") if "=" in kv) for i in idx]
        differ = [k for k in params[0] if len({p.get(k) for p in params}) > 1]
        for i, p in zip(idx, params):
            extra = ",".join(f"{k}={p.get(k)}" for k in differ[:2])
            if cfg["variant"].iloc[i] != cfg["variant"].iloc[idx[0]] or not extra:
                extra = (extra + " " if extra else "") + str(cfg["variant"].iloc[i])
            names[i] = f"{name} {extra}"
    return names


def _pairs(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per configuration: the metric and median time of FP32 and FP16 side by side."""
    d = df[df["dtype"].isin(["fp32", "fp16"])].copy()
    for k in _CONFIG_KEYS:
        if k not in d:
            d[k] = d["kernel"] if k == "family" else ""
        d[k] = d[k].fillna("").astype(str)
    d[metric] = _num(d, metric)
    d["time_median_us"] = _num(d, "time_median_us")
    d["above"] = rl._as_bool(d["above_peak"]).astype(float) if "above_peak" in d else 0.0
    d = d.groupby(_CONFIG_KEYS + ["dtype"], sort=False)[[metric, "time_median_us", "above"]].agg(
        {metric: "median", "time_median_us": "median", "above": "max"}).reset_index()
    # unstack, not pivot_table(dropna=False): that one crosses every level with every other
    wide = d.set_index(_CONFIG_KEYS + ["dtype"])[[metric, "time_median_us", "above"]].unstack("dtype")
    order = d[_CONFIG_KEYS].drop_duplicates()
    wide = wide.reindex(pd.MultiIndex.from_frame(order))
    out = order.reset_index(drop=True)
    for dt in ("fp32", "fp16"):
        for col, name in ((metric, "value"), ("time_median_us", "time_us"), ("above", "above_peak")):
            out[f"{dt}_{name}"] = wide[(col, dt)].to_numpy(float) if (col, dt) in wide.columns else np.nan
    out["speedup"] = out["fp32_time_us"] / out["fp16_time_us"]
    return out


def comparison_table(df: pd.DataFrame, metric: str = "bandwidth_gbs") -> pd.DataFrame:
    """Per operation (family): mean FP32 and FP16 ``metric``, and FP16's speed-up over FP32 (the
    geometric mean of FP32 time / FP16 time over its configurations), with an "all" row."""
    p = _pairs(_rows(df, "comparison_table"), metric)
    rows = []
    for fam, g in list(p.groupby("family", sort=False)) + [("all", p)]:
        s = g["speedup"].dropna()
        s = s[s > 0]
        rows.append({"operation": fam, "configs": int(len(g)), f"fp32_{metric}": g["fp32_value"].mean(),
                     f"fp16_{metric}": g["fp16_value"].mean(),
                     "fp16_speedup": float(np.exp(np.log(s).mean())) if len(s) else np.nan})
    return pd.DataFrame(rows)


_WIDE_PANEL_CONFIGS = 8  # more configurations than this: the panel takes a whole row


def fp32_vs_fp16(df: pd.DataFrame, path=None, *, metric: str = "bandwidth_gbs", device_name=None,
                 ncols: int = 3) -> Figure:
    """One panel per operation with FP32 and FP16 bars per configuration (GB/s), FP16's speed-up
    written over each pair, the measured peak as a line, and the table of averages beside them."""
    rows = _rows(df, "fp32_vs_fp16")
    if "dtype" not in rows or not {"fp32", "fp16"} <= set(rows["dtype"]):
        raise NoData("fp32_vs_fp16: needs both fp32 and fp16 rows")
    unit = "GB/s" if metric == "bandwidth_gbs" else "GFLOP/s" if metric == "gflops" else metric
    peak_col = {"bandwidth_gbs": "peak_bandwidth_gbs", "gflops": "peak_gflops"}.get(metric)
    theo_col = {"bandwidth_gbs": "theoretical_bandwidth_gbs"}.get(metric)
    pairs = _pairs(rows, metric)
    fams = list(dict.fromkeys(pairs["family"]))
    n = len(fams)
    ncols = max(1, min(ncols, n + 1))
    # An operation with many configurations gets a whole row, so its labels stay readable.
    counts = pairs["family"].value_counts()
    spans = [ncols if counts[f] > _WIDE_PANEL_CONFIGS else 1 for f in fams]
    places, r, c = [], 0, 0
    for span in spans:
        if c + span > ncols:
            r, c = r + 1, 0
        places.append((r, c, span))
        c += span
        if c == ncols:
            r, c = r + 1, 0
    table_place = (r, c, ncols - c)  # the rest of the last row, or a row of its own
    nrows = r + 1
    fig = _figure(5.4 * ncols, 4.0 * nrows + 0.8, layout="constrained")
    gs = fig.add_gridspec(nrows, ncols)
    for fam, (pr, pc, span) in zip(fams, places):
        ax = fig.add_subplot(gs[pr, pc:pc + span])
        cfg = pairs[pairs["family"] == fam].reset_index(drop=True)
        x = np.arange(len(cfg))
        w = 0.38
        v32, v16 = cfg["fp32_value"].to_numpy(float), cfg["fp16_value"].to_numpy(float)
        ok32, ok16 = np.isfinite(v32), np.isfinite(v16)
        for dt, xs, vals, ok in (("fp32", x - w / 2, v32, ok32), ("fp16", x + w / 2, v16, ok16)):
            bars = ax.bar(xs[ok], vals[ok], w, color=_color(dt), label=dt.upper(), edgecolor="white", lw=0.5)
            for b, hot in zip(bars, cfg[f"{dt}_above_peak"].to_numpy(float)[ok] > 0):
                if hot:  # above the device's peak: the data stayed in cache
                    b.set_hatch("///")
                    b.set_edgecolor("black")
        top = np.nanmax(np.concatenate([v32, v16, [0.0]]))
        fam_rows = rows[rows.get("family", rows["kernel"]).astype(str) == fam]
        peak = rl._mode(fam_rows[peak_col]) if peak_col and peak_col in fam_rows else np.nan
        theo = rl._mode(fam_rows[theo_col]) if theo_col and theo_col in fam_rows else np.nan
        ymax = top * 1.22 if top > 0 else 1.0
        notes = []
        for val, style, what in ((peak, "-", "measured peak"), (theo, "--", "theoretical peak")):
            if not np.isfinite(val):
                continue
            if top >= 0.2 * val:  # on scale: draw it
                ax.axhline(val, color="0.25", ls=style, lw=1.2)
                ax.annotate(f"{what} {_fmt_rate(val, unit)}", (1.0, val), xycoords=("axes fraction", "data"),
                            xytext=(-2, 2), textcoords="offset points", ha="right", va="bottom", fontsize=7.5,
                            color="0.25", bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
                ymax = max(ymax, val * 1.15)
            else:  # a line 5x above the bars would flatten them to nothing
                notes.append(f"{what} {_fmt_rate(val, unit)} (off scale)")
        ax.set_ylim(0, ymax)
        for xi, s, a, b in zip(x, cfg["speedup"], v32, v16):
            if np.isfinite(s) and s > 0:
                h = np.nanmax([a, b])
                ax.text(xi, h + 0.015 * ymax, f"\u00d7{s:.2f}", ha="center", va="bottom", fontsize=8,
                        fontweight="bold", color="#1a7f37" if s >= 1.05 else "#b42318" if s <= 0.95 else "0.3")
        ax.set_xticks(x)
        names = _config_names(cfg)
        long = max((len(s) for s in names), default=0) > 12 or len(names) > 4
        many = len(names) > _WIDE_PANEL_CONFIGS
        ax.set_xticklabels([_wrap(s, 22 if many else 14) for s in names], fontsize=7 if many else 8,
                           rotation=40 if many else 25 if long else 0,
                           ha="right" if long else "center", rotation_mode="anchor")
        ax.set_ylabel(f"{'bandwidth' if unit == 'GB/s' else metric} ({unit})")
        ax.set_title(fam, fontsize=11, fontweight="bold")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
        if notes:
            ax.text(0.99, 0.98, "\n".join(notes), transform=ax.transAxes, ha="right", va="top", fontsize=7.5,
                    color="0.3")
    # The summary table beside the panels.
    tab = comparison_table(rows, metric)
    r, c0, _ = table_place
    tax = fig.add_subplot(gs[r, c0:])
    tax.axis("off")
    def cell(v):
        return _fmt_rate(v, unit) if unit in ("GB/s", "GFLOP/s") else f"{v:.3g}"

    cells = [[str(t.operation), f"{t.configs}", cell(t[2]), cell(t[3]),
              f"\u00d7{t.fp16_speedup:.2f}" if np.isfinite(t.fp16_speedup) else "-"]
             for t in tab.itertuples(index=False)]
    table = tax.table(cellText=cells, colLabels=["operation", "configs", "FP32 mean", "FP16 mean", "speed-up"],
                      loc="upper center", cellLoc="center", colLoc="center",
                      colWidths=[0.22, 0.14, 0.22, 0.22, 0.2])  # wide enough for the bold headers
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1.0, 1.35)
    for (ri, ci), cell in table.get_celld().items():
        cell.set_edgecolor("0.8")
        if ri == 0:
            cell.set_facecolor("#eef2f7")
            cell.set_text_props(fontweight="bold")
        elif ri == len(cells):
            cell.set_text_props(fontweight="bold")
    tax.set_title(f"averages ({unit}) and FP16 speed-up", fontsize=10)
    fig.suptitle(f"FP32 vs FP16 {'bandwidth' if unit == 'GB/s' else metric} on {_device_name(rows, device_name)}",
                 fontsize=14, fontweight="bold")
    tax.text(0.5, 0.0, _wrap("bars: achieved " + unit + " per configuration (median time). \u00d7N over a pair: "
                             "FP16 speed-up = FP32 time / FP16 time (green faster, red slower; geometric "
                             "mean in the table). Solid line: measured peak; dashed: theoretical. Hatched: above "
                             "the device's peak (the data stayed in cache).", 95),
             transform=tax.transAxes, ha="center", va="bottom", fontsize=8.5, color="0.3")
    fig.legend(handles=[Patch(color=_color("fp32"), label="FP32"), Patch(color=_color("fp16"), label="FP16")],
               loc="outside upper right", ncols=2, frameon=False, fontsize=10)
    _save(fig, path)
    return fig


# ---------------------------------------------------------------------------------------------
# label placement without overlaps

def _overlap_area(box, boxes):
    """Overlap area of one box (x0, y0, x1, y1) with each of ``boxes`` (n x 4)."""
    if len(boxes) == 0:
        return np.zeros(0)
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def place_labels(ax, xs, ys, texts, *, fontsize: float = 7.0, color="0.15", line_paths=(), avoid=(),
                 gid: str = POINT_LABEL_GID, **text_kw):
    """Annotate each point (data coordinates) with its text where no two labels overlap.

    A greedy search, the most crowded points first: candidate boxes on rings of growing radius
    around the point; a candidate must stay inside the axes and off every placed label; among
    those, the nearest one that covers the fewest points and lines wins. Distant labels get a
    leader line. ``color`` is one colour or one per label; ``avoid`` holds artists (texts, markers,
    earlier labels) that no label may cover. Returns the Annotation artists (with ``gid``).
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    pts = ax.transData.transform(np.column_stack([xs, ys])) if len(xs) else np.zeros((0, 2))
    ab = ax.get_window_extent(renderer)
    margin, pad = 2.0, 2.0  # pixels: from the axes' edge, and around each label
    sizes = []
    for t in texts:
        probe = ax.text(0, 0, t, fontsize=fontsize, **text_kw)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((bb.width + 2 * pad, bb.height + 2 * pad))
    r_pt = 4.5  # half a marker, in pixels
    point_boxes = np.column_stack([pts[:, 0] - r_pt, pts[:, 1] - r_pt, pts[:, 0] + r_pt, pts[:, 1] + r_pt]) \
        if len(pts) else np.zeros((0, 4))
    # Lines as a dotted set of small boxes: crossing one costs a little, never forbids.
    line_pts = []
    for path in line_paths:
        disp = ax.transData.transform(np.asarray(path, float))
        for a, b in zip(disp[:-1], disp[1:]):
            k = max(1, int(np.hypot(*(b - a)) / 6))
            line_pts.append(a + (b - a) * np.linspace(0, 1, k, endpoint=False)[:, None])
    line_pts = np.concatenate(line_pts) if line_pts else np.zeros((0, 2))
    line_pts = line_pts[(line_pts[:, 0] >= ab.x0) & (line_pts[:, 0] <= ab.x1) &
                        (line_pts[:, 1] >= ab.y0) & (line_pts[:, 1] <= ab.y1)] if len(line_pts) else line_pts

    # Most crowded first: they have the fewest good spots.
    if len(pts):
        d = np.hypot(pts[:, None, 0] - pts[None, :, 0], pts[:, None, 1] - pts[None, :, 1])
        crowd = (d < 60).sum(axis=1)
    else:
        crowd = np.zeros(0)
    order = sorted(range(len(pts)), key=lambda i: (-crowd[i], i))
    angles = np.deg2rad(np.arange(0, 360, 22.5))
    radii = (4, 10, 18, 28, 40, 55, 75, 100, 130, 170, 220)
    placed = []
    for art in avoid:
        box = getattr(art, "_bwprof_box", None)
        if box is None:
            bb = art.get_window_extent(renderer)
            box = (bb.x0, bb.y0, bb.x1, bb.y1)
        placed.append(box)
    placed = np.array(placed, float).reshape(-1, 4)
    centers = {}
    for i in order:
        w, h = sizes[i]
        px, py = pts[i]
        best, best_score = None, np.inf
        for r in radii:
            for a in angles:
                c, s = math.cos(a), math.sin(a)
                cx, cy = px + c * (r + w / 2), py + s * (r + h / 2)
                box = np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
                if box[0] < ab.x0 + margin or box[2] > ab.x1 - margin or \
                        box[1] < ab.y0 + margin or box[3] > ab.y1 - margin:
                    continue
                if len(placed) and _overlap_area(box, placed).max() > 0:
                    continue
                cover = _overlap_area(box, point_boxes).sum() / (4 * r_pt * r_pt)
                on_line = 0
                if len(line_pts):
                    on_line = int(((line_pts[:, 0] > box[0]) & (line_pts[:, 0] < box[2]) &
                                   (line_pts[:, 1] > box[1]) & (line_pts[:, 1] < box[3])).sum())
                # near first; right of and above the point read best
                score = r + 200.0 * cover + 4.0 * on_line + (3.0 if c < -0.1 else 0.0)
                if score < best_score:
                    best, best_score = box, score
            if best is not None and best_score < r + 1:  # a clean spot on this ring
                break
        if best is None:  # the rings are full: the nearest free spot anywhere in the axes
            step = 6.0
            gx = np.arange(ab.x0 + margin + w / 2, ab.x1 - margin - w / 2, step)
            gy = np.arange(ab.y0 + margin + h / 2, ab.y1 - margin - h / 2, step)
            cand = sorted(((cx, cy) for cx in gx for cy in gy), key=lambda q: (q[0] - px) ** 2 + (q[1] - py) ** 2)
            for cx, cy in cand:
                box = np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
                if not len(placed) or _overlap_area(box, placed).max() <= 0:
                    best = box
                    break
        if best is None:  # no room at all: overlap rather than drop the label
            best = np.array([px + 6, py - h / 2, px + 6 + w, py + h / 2])
        placed = np.vstack([placed, best])
        centers[i] = ((best[0] + best[2]) / 2, (best[1] + best[3]) / 2)

    to_pt = 72.0 / fig.dpi
    anns = []
    for i in range(len(pts)):
        cx, cy = centers[i]
        dx, dy = (cx - pts[i, 0]) * to_pt, (cy - pts[i, 1]) * to_pt
        w, h = sizes[i]
        far = abs(cx - pts[i, 0]) > w / 2 + 12 or abs(cy - pts[i, 1]) > h / 2 + 12
        col = color[i] if isinstance(color, (list, tuple)) else color
        ann = ax.annotate(texts[i], (xs[i], ys[i]), xytext=(dx, dy), textcoords="offset points",
                          ha="center", va="center", fontsize=fontsize, color=col, gid=gid, zorder=7,
                          annotation_clip=False,
                          arrowprops=dict(arrowstyle="-", lw=0.5, color="0.45", shrinkA=0, shrinkB=3)
                          if far else None, **text_kw)
        ann._bwprof_box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        anns.append(ann)
    return anns


# ---------------------------------------------------------------------------------------------
# roofline

def _point_label(r) -> str:
    lab = r.get("label") if isinstance(r.get("label"), str) else ""
    name = str(r.get("kernel", ""))
    fam = str(r.get("family", ""))
    if fam and lab.startswith(fam + " "):  # "stream_triad stream 64 MiB" says "stream" twice
        lab = lab[len(fam) + 1:]
    if not lab and r.get("shape"):
        lab = str(r["shape"])[:24]
    return f"{name} {lab}".strip()


def _roofs(ceil: pd.DataFrame, dtypes) -> list[tuple]:
    """(dtype, source, kind, bandwidth, gflops) of every roof to draw. A theoretical roof takes
    the measured value of its other half where the datasheet lacks one (a theoretical matrix
    roof over the measured bandwidth); a dtype without any compute roof gets its bandwidth roof."""
    def value(dt, kind, src):
        v = ceil[(ceil.dtype == dt) & (ceil.kind == kind) & (ceil.source == src)]["value"]
        return float(v.max()) if len(v) else math.nan

    out = []
    for dt in dtypes:
        any_compute = False
        for src in ("measured", "theoretical"):
            other = "theoretical" if src == "measured" else "measured"
            bw, bw_own = value(dt, "memory", src), True
            if math.isnan(bw):
                bw, bw_own = value(dt, "memory", other), False
            for kind in ("vector", "matrix"):
                fl, fl_own = value(dt, kind, src), True
                if math.isnan(fl) and src == "theoretical":
                    fl, fl_own = value(dt, kind, other), False
                if math.isnan(bw) or math.isnan(fl) or not (bw_own or fl_own):
                    continue
                if src == "theoretical" and any(r[:1] == (dt,) and r[2] == kind and r[3:] == (bw, fl) for r in out):
                    continue  # the datasheet adds nothing new to the measured roof
                out.append((dt, src, kind, bw, fl))
                any_compute = True
        if not any_compute:
            for src in ("measured", "theoretical"):
                bw = value(dt, "memory", src)
                if not math.isnan(bw):
                    out.append((dt, src, "memory", bw, math.nan))
    return out


def _point_labels(pts: pd.DataFrame) -> list[str]:
    """A label per point; points of one dtype with equal labels get the parameters that differ."""
    recs = pts.to_dict("records")
    labels = [_point_label(r) for r in recs]
    groups: dict = {}
    for i, r in enumerate(recs):
        groups.setdefault((labels[i], r.get("dtype")), []).append(i)
    out = list(labels)
    for (lab, _), idx in groups.items():
        if len(idx) < 2:
            continue
        params = [dict(kv.split("=", 1) for kv in str(recs[i].get("shape", "")).split(",") if "=" in kv)
                  for i in idx]
        differ = [k for k in params[0] if len({p.get(k) for p in params}) > 1][:2]
        for i, p in zip(idx, params):
            if differ:
                out[i] = f"{lab} " + ",".join(f"{k}={p.get(k)}" for k in differ)
    return out


def roofline(df: pd.DataFrame, ceilings: pd.DataFrame | None = None, sweep: pd.DataFrame | None = None,
             path=None, *, device_name=None, label_points: bool = True, fontsize: float = 7.0) -> Figure:
    """Log-log roofline: the roofs per dtype (measured solid, theoretical dashed), ridge points,
    the measured intensity sweep when given, and every kernel as a labelled point (colour by
    dtype, marker by family). Rows without FLOPs cannot sit on it and are listed underneath."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"roofline: expected a pandas DataFrame, got {type(df).__name__}")
    rows, own_sweep = rl.split_sweep(df)
    if sweep is None and len(own_sweep):
        sweep = own_sweep
    ceil = rl.ceilings(rows) if ceilings is None else ceilings
    if not isinstance(ceil, pd.DataFrame) or not len(ceil):
        raise NoData("roofline: no ceilings (no peak columns in the DataFrame and none given)")
    inten, gfl = _num(rows, "intensity_flop_per_byte"), _num(rows, "gflops")
    on = (inten > 0) & (gfl > 0) & np.isfinite(inten) & np.isfinite(gfl)
    pts, off = rows[on], rows[~on]

    # Axis ranges: every point, ridge and sweep sample, with room for labels.
    dtypes = list(dict.fromkeys(list(ceil["dtype"]) + list(pts.get("dtype", pd.Series(dtype=str)))))
    roofs = _roofs(ceil, dtypes)
    ridges = [r + (rl.ridge_point(r[3], r[4]),) for r in roofs if r[2] != "memory"]
    xs = list(inten[on]) + [r[5] for r in ridges]
    ys = list(gfl[on]) + [r[4] for r in ridges]
    if sweep is not None and len(sweep):
        sx, sy = _num(sweep, "intensity_flop_per_byte"), _num(sweep, "gflops")
        good = (sx > 0) & (sy > 0)
        xs += list(sx[good])
        ys += list(sy[good])
    if not xs:
        raise NoData("roofline: nothing to draw (no roofs and no row with FLOPs)")
    x_lo, x_hi = min(xs) / 4, max(xs) * 6
    if x_hi / x_lo < 1e3:  # at least three decades, so the slope reads as a slope
        mid = math.sqrt(x_lo * x_hi)
        x_lo, x_hi = mid / 10 ** 1.5, mid * 10 ** 1.5
    y_lo, y_hi = min(ys) / 3, max(ys) * 3

    fig = _figure(13.5, 8.2)
    fig.subplots_adjust(left=0.07, right=0.78, top=0.93, bottom=0.12 if len(off) else 0.08)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    grid = np.geomspace(x_lo, x_hi, 400)
    line_paths, roof_handles, flat_labels = [], [], {}
    for dt, src, kind, bw, fl in roofs:
        # equal roofs of two dtypes (common on a CPU) stay visible: each later dtype is thinner
        thin = 0.55 ** dtypes.index(dt)
        style, lw = ("-", 3.2 * thin) if src == "measured" else ("--", 1.8 * thin)
        if kind == "memory":  # a bandwidth roof alone: the slanted line across the chart
            y = grid * bw
            ax.plot(grid, y, ls=style, lw=lw, color=_color(dt), gid=ROOF_GID, label=f"{dt} memory {src}")
            line_paths.append(np.column_stack([grid, y]))
            roof_handles.append(Line2D([], [], ls=style, lw=max(lw, 1.5), color=_color(dt),
                                       label=f"{dt} memory, {src}: {_fmt_rate(bw, 'GB/s')}"))
            continue
        y = rl.attainable(grid, bw, fl)
        alpha = 1.0 if kind == "vector" else 0.75
        ax.plot(grid, y, ls=style, lw=lw if kind == "vector" else lw * 0.8, color=_color(dt), alpha=alpha,
                gid=ROOF_GID, label=f"{dt} {kind} {src}")
        line_paths.append(np.column_stack([grid, y]))
        roof_handles.append(Line2D([], [], ls=style, lw=max(lw, 1.5), color=_color(dt), alpha=alpha,
                                   label=f"{dt} {kind}, {src}:\n{_fmt_rate(bw, 'GB/s')}, "
                                         f"{_fmt_rate(fl, 'GFLOP/s')}"))
        flat_labels.setdefault((kind, round(math.log10(fl), 2)), []).append((dt, src, fl))
    # One text per distinct flat roof (fp32 and fp16, or measured and datasheet, often share one).
    fixed_texts = []
    for (kind, _), same in flat_labels.items():
        dts = list(dict.fromkeys(d for d, _, _ in same))
        theoretical_only = all(src == "theoretical" for _, src, _ in same)
        fl = same[0][2]
        fixed_texts.append(ax.text(x_hi / 1.15, fl * 1.06, f"{'/'.join(dts)} {kind} {_fmt_rate(fl, 'GFLOP/s')}"
                                   + (" (theoretical)" if theoretical_only else ""), ha="right", va="bottom",
                                   fontsize=8, color=_color(dts[0]),
                                   fontweight="normal" if theoretical_only else "bold"))
    # Ridge points; their labels are placed with the kernels' so that none overlaps.
    seen, ridge_labels = [], []
    for dt, src, kind, bw, fl, ridge in ridges:
        (marker,) = ax.plot([ridge], [fl], marker="D", ms=7, mfc="white", mec=_color(dt), mew=1.6, ls="none",
                            zorder=4)
        fixed_texts.append(marker)
        if any(abs(math.log10(ridge / r)) < 0.02 and abs(math.log10(fl / f)) < 0.02 for r, f in seen):
            continue
        seen.append((ridge, fl))
        ridge_labels.append((ridge, fl, f"ridge {ridge:.3g} FLOP/B", _color(dt)))
    # The empirical roofline from the intensity sweep.
    sweep_handles = []
    if sweep is not None and len(sweep):
        groups = sweep.groupby("dtype", sort=False) if "dtype" in sweep else [("", sweep)]
        for dt, g in groups:
            g = g.assign(_x=_num(g, "intensity_flop_per_byte"), _y=_num(g, "gflops"))
            g = g[(g._x > 0) & (g._y > 0)].sort_values("_x")
            if not len(g):
                continue
            col = _color(dt) if dt else "0.2"
            ax.plot(g._x, g._y, ls=":", lw=1.6, marker=".", ms=5, color=col, zorder=3, gid=SWEEP_GID)
            line_paths.append(np.column_stack([g._x, g._y]))
            sweep_handles.append(Line2D([], [], ls=":", marker=".", color=col,
                                        label=f"{dt} intensity sweep (measured)".strip()))
    # The kernels.
    point_handles = {}
    fam_col = pts["family"].astype(str) if "family" in pts else pts["kernel"].astype(str)
    above = rl._as_bool(pts["above_peak"]) if "above_peak" in pts else pd.Series(False, index=pts.index)
    for (fam, dt), g in pts.groupby([fam_col, pts["dtype"].astype(str)], sort=False):
        ax.scatter(_num(g, "intensity_flop_per_byte"), _num(g, "gflops"), s=42, marker=_marker(fam),
                   color=_color(dt), edgecolors="black", linewidths=0.5, zorder=5, gid=POINTS_GID)
        point_handles.setdefault(("family", fam), Line2D([], [], ls="none", marker=_marker(fam), color="0.55",
                                                         mec="black", mew=0.5, label=fam))
        point_handles.setdefault(("dtype", dt), Line2D([], [], ls="none", marker="o", color=_color(dt),
                                                       label=f"{dt} kernels"))
    if above.any():
        a = pts[above]
        ax.scatter(_num(a, "intensity_flop_per_byte"), _num(a, "gflops"), s=160, facecolors="none",
                   edgecolors="#c00000", linewidths=1.4, zorder=6)
        point_handles[("x", "above")] = Line2D([], [], ls="none", marker="o", mfc="none", mec="#c00000",
                                               ms=10, label="above a roof (data in cache)")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)", fontsize=11)
    ax.set_ylabel("performance (GFLOP/s)", fontsize=11)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.1)
    ax.set_title(f"Roofline on {_device_name(rows, device_name)}", fontsize=14, fontweight="bold", loc="left")
    leg1 = ax.legend(handles=roof_handles + sweep_handles
                     + [Line2D([], [], ls="none", marker="D", mfc="white", mec="0.3", label="ridge point")],
                     title="roofs (solid: measured, dashed: theoretical)", fontsize=8, title_fontsize=8.5,
                     loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.add_artist(leg1)
    ax.legend(handles=[h for k, h in point_handles.items() if k[0] == "dtype"]
              + [h for k, h in point_handles.items() if k[0] == "family"]
              + [h for k, h in point_handles.items() if k[0] == "x"],
              title="kernels (colour: dtype, marker: family)", fontsize=8, title_fontsize=8.5,
              loc="upper left", bbox_to_anchor=(1.01, 0.45), frameon=False)
    if len(off):
        names = off.get("kernel", pd.Series(dtype=str)).astype(str).value_counts(sort=False)
        listed = ", ".join(f"{k} \u00d7{v}" if v > 1 else k for k, v in names.items())
        fig.text(0.07, 0.015, _wrap(f"Not on the chart (no FLOPs, judged by bandwidth alone; see the bandwidth "
                                    f"charts): {listed}", 150), fontsize=8, color="0.3", va="bottom")
    if ridge_labels:
        rx, ry, rt, rc = zip(*ridge_labels)
        fixed_texts += place_labels(ax, rx, ry, list(rt), fontsize=7.5, color=list(rc), line_paths=line_paths,
                                    avoid=fixed_texts, gid=RIDGE_LABEL_GID)
    if label_points and len(pts):
        place_labels(ax, _num(pts, "intensity_flop_per_byte").to_numpy(), _num(pts, "gflops").to_numpy(),
                     _point_labels(pts), fontsize=fontsize,
                     line_paths=line_paths, avoid=fixed_texts)
    _save(fig, path)
    return fig


# ---------------------------------------------------------------------------------------------
# time breakdown

_TIME_COLUMNS = [("total_time_ns", 1e-9), ("duration_ns", 1e-9), ("time_ns", 1e-9), ("total_time_us", 1e-6),
                 ("time_median_us", 1e-6), ("duration_us", 1e-6), ("time_us", 1e-6), ("total_time_ms", 1e-3),
                 ("time_ms", 1e-3), ("time_s", 1.0)]


def _time_unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def time_breakdown(df: pd.DataFrame, category: str = "category", time: str | None = None, kind: str = "bar",
                   path=None, *, title: str | None = None, device_name=None, top: int = 12) -> Figure:
    """Horizontal bars (or a pie) of the time per category, largest first, with % of the total.

    ``time`` is a time column; by default the first of total_time_ns, duration_ns, time_ns,
    ..._us, ..._ms present (the unit is read from the suffix). Rows of one category are summed;
    categories past ``top`` are merged into "other".
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"time_breakdown: expected a pandas DataFrame, got {type(df).__name__}")
    if kind not in ("bar", "pie"):
        raise ValueError(f"time_breakdown: kind must be 'bar' or 'pie', not {kind!r}")
    if category not in df:
        raise ValueError(f"time_breakdown: no column {category!r} (columns: {', '.join(map(str, df.columns))})")
    if time is None:
        time = next((c for c, _ in _TIME_COLUMNS if c in df), None)
        if time is None:
            raise ValueError("time_breakdown: no time column found; pass time=<column> (with _ns, _us, _ms or _s)")
    elif time not in df:
        raise ValueError(f"time_breakdown: no column {time!r}")
    scale = dict(_TIME_COLUMNS).get(time)
    if scale is None:
        suffix = time.rsplit("_", 1)[-1]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(suffix)
        if scale is None:
            raise ValueError(f"time_breakdown: cannot tell the unit of {time!r}; name it *_ns, *_us, *_ms or *_s")
    secs = (pd.to_numeric(df[time], errors="coerce").fillna(0.0) * scale).groupby(
        df[category].fillna("(none)").astype(str), sort=False).sum()
    secs = secs[secs > 0].sort_values(ascending=False, kind="stable")
    if not len(secs):
        raise NoData("time_breakdown: no time to show")
    if len(secs) > top:
        secs = pd.concat([secs.iloc[:top - 1], pd.Series({"other": secs.iloc[top - 1:].sum()})])
    total = secs.sum()
    unit, uscale = _time_unit(float(secs.max()))
    pct = 100.0 * secs / total
    colors = [_CATEGORY_COLORS[i % len(_CATEGORY_COLORS)] for i in range(len(secs))]
    what = "GPU time" if time in ("total_time_ns", "duration_ns") else "time"
    dev = _device_name(df, device_name) if (device_name or "device_name" in df or df.attrs.get("device_name")) \
        else None
    heading = title or f"{what.capitalize()} by {category}" + (f" on {dev}" if dev else "")
    if kind == "bar":
        fig = _figure(10, 1.2 + 0.42 * len(secs), layout="constrained")
        ax = fig.add_subplot(1, 1, 1)
        y = np.arange(len(secs))[::-1]
        vals = secs.to_numpy() / uscale
        ax.barh(y, vals, color=colors, edgecolor="white", height=0.7)
        ax.set_yticks(y)
        ax.set_yticklabels(list(secs.index), fontsize=9)
        for yi, v, p in zip(y, vals, pct):
            ax.text(v + 0.01 * vals.max(), yi, f"{v:.3g} {unit}  ({p:.1f} %)", va="center", fontsize=8.5)
        ax.set_xlim(0, vals.max() * 1.28)
        ax.set_xlabel(f"{what} ({unit}); total {total / uscale:.4g} {unit}")
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    else:
        fig = _figure(10, 6.2, layout="constrained")
        ax = fig.add_subplot(1, 1, 1)
        # Slices under 2 % would print unreadable labels: fold them into "other".
        small = pct < 2.0
        if small.sum() > 1:
            rest = secs[small].sum()
            secs = secs[~small]
            secs = pd.concat([secs, pd.Series({"other": secs.get("other", 0.0) + rest})]) if "other" not in secs \
                else secs.add(pd.Series({"other": rest}), fill_value=0)
            pct = 100.0 * secs / total
            colors = [_CATEGORY_COLORS[i % len(_CATEGORY_COLORS)] for i in range(len(secs))]
        wedges, _, autotexts = ax.pie(secs.to_numpy(), colors=colors, startangle=90, counterclock=False,
                                      autopct=lambda p: f"{p:.1f} %" if p >= 4 else "", pctdistance=0.75,
                                      wedgeprops=dict(edgecolor="white", linewidth=1.2))
        for t in autotexts:
            t.set_fontsize(8.5)
        ax.legend(wedges, [f"{c}: {v / uscale:.3g} {unit} ({p:.1f} %)" for c, v, p in zip(secs.index, secs, pct)],
                  loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9, frameon=False,
                  title=f"total {total / uscale:.4g} {unit}")
        ax.set_aspect("equal")
    ax.set_title(heading, fontsize=13, fontweight="bold", loc="left")
    _save(fig, path)
    return fig


# ---------------------------------------------------------------------------------------------
# peak bandwidth

def peak_bandwidth(source, device_name=None, path=None) -> Figure:
    """The bandwidth each stream kernel reaches beside the measured and theoretical peaks.

    ``source`` is a ``bwprof.peaks()`` dict (``bandwidth_by_kernel``) or a results DataFrame
    (its stream rows, per dtype)."""
    if isinstance(source, dict):
        by = source.get("bandwidth_by_kernel") or {}
        table = pd.DataFrame({"kernel": list(by), "dtype": "", "bandwidth_gbs": [float(v) for v in by.values()]})
        peak = rl._num(source.get("bandwidth_gbs"))
        peak_src = str(source.get("bandwidth_source") or "")
        theo = rl._num(source.get("bandwidth_theoretical_gbs"))
        name = device_name or "unknown device"
    elif isinstance(source, pd.DataFrame):
        rows = _rows(source, "peak_bandwidth")
        fam = rows["family"].astype(str) if "family" in rows else rows["kernel"].astype(str).str.split("_").str[0]
        s = rows[fam == "stream"]
        table = (s.assign(bandwidth_gbs=_num(s, "bandwidth_gbs"))
                 .groupby(["kernel", "dtype"], sort=False)["bandwidth_gbs"].max().reset_index()) if len(s) else \
            pd.DataFrame(columns=["kernel", "dtype", "bandwidth_gbs"])
        peak = rl._mode(rows["peak_bandwidth_gbs"]) if "peak_bandwidth_gbs" in rows else math.nan
        peak_src = rl._first_text(rows["peak_bandwidth_source"]) if "peak_bandwidth_source" in rows else ""
        theo = rl._mode(rows["theoretical_bandwidth_gbs"]) if "theoretical_bandwidth_gbs" in rows else math.nan
        name = _device_name(rows, device_name)
    else:
        raise ValueError(f"peak_bandwidth: expected a peaks dict or a DataFrame, got {type(source).__name__}")
    if not len(table):
        raise NoData("peak_bandwidth: no stream kernel results")
    kernels = list(dict.fromkeys(table["kernel"]))
    dts = [d for d in dict.fromkeys(table["dtype"])]
    fig = _figure(min(13.0, max(9.0, 0.9 * len(kernels) * max(1, len(dts)) + 3)), 5.6, layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(kernels))
    w = 0.8 / max(1, len(dts))
    best = table["bandwidth_gbs"].max() if len(table) else math.nan
    for j, dt in enumerate(dts):
        vals = [table[(table.kernel == k) & (table.dtype == dt)]["bandwidth_gbs"].max() for k in kernels]
        vals = np.array([v if np.isfinite(v) else 0.0 for v in vals])
        xpos = x - 0.4 + w / 2 + j * w
        color = _color(dt) if dt else "#4477aa"
        bars = ax.bar(xpos, vals, w * 0.92, color=color, label=f"{dt}" if dt else None, edgecolor="white")
        for b, v in zip(bars, vals):
            if v == best:
                b.set_edgecolor("black")
                b.set_linewidth(1.5)
            txt = f"{v:,.0f}" if v >= 100 else f"{v:.3g}"
            if np.isfinite(theo):
                txt += f"\n{100 * v / theo:.0f} %"
            ax.text(b.get_x() + b.get_width() / 2, v, txt, ha="center", va="bottom", fontsize=8, zorder=4,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
    top = np.nanmax([best if np.isfinite(best) else 0, peak if np.isfinite(peak) else 0,
                     theo if np.isfinite(theo) else 0])
    if np.isfinite(peak):
        src = peak_src.replace("measured:", "")
        ax.axhline(peak, color="0.2", lw=1.5, label=f"measured peak {_fmt_rate(peak, 'GB/s')}"
                   + (f" ({src})" if src else ""))
    if np.isfinite(theo):
        ax.axhline(theo, color="#c00000", ls="--", lw=1.5, label=f"theoretical {_fmt_rate(theo, 'GB/s')}")
    ax.set_ylim(0, top * 1.25 if top > 0 else 1)
    ax.set_xticks(x)
    ax.set_xticklabels(kernels, fontsize=9)
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_xlabel("stream kernel (outlined: the best here)"
                  + ("; % of theoretical over each bar" if np.isfinite(theo) else "; no theoretical peak known"))
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8.5, loc="upper right", frameon=False, ncols=2)
    title = f"Peak memory bandwidth per stream kernel on {name}"
    if len(title) > 62:  # the device's name on a line of its own
        title = f"Peak memory bandwidth per stream kernel\non {name}"
    ax.set_title(title, fontsize=13, fontweight="bold", loc="left")
    _save(fig, path)
    return fig


# ---------------------------------------------------------------------------------------------
# all of them, and the CLI

def plot_all(df: pd.DataFrame, out_dir, *, ceilings: pd.DataFrame | None = None, sweep=None,
             device_name=None) -> list[Path]:
    """Every chart ``df`` supports, as PNG and SVG in ``out_dir``; returns the files written.
    A chart without data (e.g. FP32 vs FP16 from a one-dtype run) is skipped."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"plot_all: expected a pandas DataFrame, got {type(df).__name__}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    has_cat = "category" in df
    # The intensity sweep is a measuring instrument, not a workload: keep it out of the time shares.
    kernels_only = rl.split_sweep(df)[0]
    jobs = [
        ("fp32_vs_fp16", lambda p: fp32_vs_fp16(df, p, device_name=device_name)),
        ("roofline", lambda p: roofline(df, ceilings, sweep, p, device_name=device_name)),
        ("peak_bandwidth", lambda p: peak_bandwidth(df, device_name=device_name, path=p)),
        ("time_breakdown", lambda p: time_breakdown(kernels_only, "category" if has_cat else "family",
                                                    None if has_cat else "time_median_us", path=p,
                                                    device_name=device_name,
                                                    title=None if has_cat else
                                                    f"Median kernel time per family on "
                                                    f"{_device_name(df, device_name)} (one run of each)")),
    ]
    paths = []
    for name, draw in jobs:
        if name == "time_breakdown" and not has_cat and "family" not in df:
            continue
        try:
            fig = draw(out / name)
        except NoData:
            continue
        paths += getattr(fig, "_bwprof_paths", [])
    return paths


def _cmd_plot(args) -> int:
    from .results import load_run
    src = Path(args.results)
    df = load_run(src)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    paths = plot_all(df, out)
    if not paths:
        print(f"bwprof: nothing to plot in {src}", file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


def register_cli(subparsers) -> None:
    """Adds ``plot RESULTS [--out DIR]`` to the bwprof CLI."""
    s = subparsers.add_parser("plot", help="draw the charts (FP32 vs FP16, roofline, bandwidth, time) of a run")
    s.add_argument("results", metavar="RESULTS", help="a run folder, its results.csv or bandwidth_report.json")
    s.add_argument("--out", metavar="DIR", help="folder for the PNG and SVG files (default: the run folder)")
    s.set_defaults(func=_cmd_plot)


__all__ = ["DTYPE_COLORS", "FAMILY_MARKERS", "NoData", "POINT_LABEL_GID", "POINTS_GID", "RIDGE_LABEL_GID",
           "ROOF_GID", "SWEEP_GID",
           "comparison_table", "fp32_vs_fp16", "peak_bandwidth", "place_labels", "plot_all", "register_cli",
           "roofline", "time_breakdown"]
