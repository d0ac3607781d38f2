"""The roofline chart: roofs per dtype, ridge points, the measured intensity sweep and every
kernel as a labelled point. (Not named roofline.py: the package exports the function
``roofline``, which would hide a submodule of that name.)"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl
from .figure import NoData, _device_name, _figure, _num, _save
from .labels import place_labels
from .style import (LEVEL_COLORS, LEVEL_GID, POINTS_GID, RIDGE_LABEL_GID, ROOF_GID, SWEEP_GID, _color, _fmt_rate,
                    _marker, _wrap)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

def _point_label(r) -> str:
    lab = r.get("label") if isinstance(r.get("label"), str) else ""
    name = str(r.get("kernel", ""))
    fam = str(r.get("family", ""))
    if fam and lab.startswith(fam + " "):  # "stream_triad stream n=16Mi" says "stream" twice
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


def _levels(ceil: pd.DataFrame) -> list[tuple]:
    """(kind, name, GB/s) of each measured cache level in the ceilings, slowest first."""
    out = []
    for kind in ("l2", "l1"):
        v = ceil[(ceil.kind == kind) & (ceil.source == "measured")]["value"] if "kind" in ceil else []
        if len(v) and float(v.max()) > 0:
            out.append((kind, rl.LEVEL_NAMES[kind], float(v.max())))
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
             path=None, *, device_name=None, label_points: bool = True, fontsize: float = 7.0,
             hierarchy: bool | None = None) -> Figure:
    """Log-log roofline: the roofs per dtype (measured solid, theoretical dashed), ridge points,
    the measured intensity sweep when given, and every kernel as a labelled point (colour by
    dtype, marker by family). Rows without FLOPs cannot sit on it and are listed underneath.
    ``hierarchy`` draws the cache levels' roofs (L2, L1/shared memory) above the DRAM one, grey
    and dash-dotted; by default they are drawn when the ceilings hold them (bwprof measured them)."""
    from matplotlib.lines import Line2D

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"roofline: expected a pandas DataFrame, got {type(df).__name__}")
    rows, own_sweep = rl.split_sweep(df)
    if sweep is None and len(own_sweep):
        sweep = own_sweep
    ceil = rl.ceilings(rows) if ceilings is None else ceilings
    if not isinstance(ceil, pd.DataFrame) or not len(ceil):
        raise NoData("roofline: no ceilings (no peak columns in the DataFrame and none given)")
    levels = _levels(ceil) if hierarchy is None or hierarchy else []
    if hierarchy and not levels:
        raise NoData("roofline: hierarchy=True but the ceilings hold no cache level (bwprof.peaks() measures them)")
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
    fixed_texts = []
    # The cache levels: bandwidth roofs above DRAM's, up to the highest compute roof.
    top = max([r[4] for r in roofs if r[2] != "memory"] or [y_hi])
    for kind, name, bw in levels:
        y = np.minimum(grid * bw, top)
        ax.plot(grid, y, ls="-.", lw=1.4, color=LEVEL_COLORS[kind], gid=LEVEL_GID, label=f"{name} roof")
        line_paths.append(np.column_stack([grid, y]))
        roof_handles.append(Line2D([], [], ls="-.", lw=1.4, color=LEVEL_COLORS[kind],
                                   label=f"{name}, measured: {_fmt_rate(bw, 'GB/s')}"))
        x_text = max(x_lo * 1.3, y_lo * 1.5 / bw)
        if x_text * bw < top:
            fixed_texts.append(ax.text(x_text, x_text * bw * 1.12, f"{name} {_fmt_rate(bw, 'GB/s')}", fontsize=7.5,
                                       color=LEVEL_COLORS[kind], rotation=0, ha="left", va="bottom"))
    # One text per distinct flat roof (fp32 and fp16, or measured and datasheet, often share one).
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
        def listed(rows):
            names = rows.get("kernel", pd.Series(dtype=str)).astype(str).value_counts(sort=False)
            return ", ".join(f"{k} \u00d7{v}" if v > 1 else k for k, v in names.items())
        # FLOPs unknown is not "no FLOPs": those rows are not judged by bandwidth unless it proves them.
        unknown = rl._flops_of(off).isna()
        parts = []
        if (~unknown).any():
            parts.append(f"no FLOPs, judged by bandwidth alone (see the bandwidth charts): {listed(off[~unknown])}")
        if unknown.any():
            parts.append(f"FLOPs unknown: {listed(off[unknown])}")
        fig.text(0.07, 0.015, _wrap("Not on the chart: " + ". ".join(parts), 150), fontsize=8, color="0.3",
                 va="bottom")
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
