"""A workload's charts: where each step's time goes (the parts stacked by category, the measured
whole step beside them, the gap between), and the what-if chart (each fusion's measured speed-up
on its ops and overall, beside the seeds' estimate)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .bars import hbars
from .figure import NoData, _figure, _save
from .style import _CATEGORY_COLORS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STEP_GID = "bwprof-step-time"      # the measured whole-step markers
GAP_GID = "bwprof-step-gap"        # the gap segments (whole step beyond its parts)


def _unit(us: float) -> tuple[str, float]:
    return ("ms", 1e3) if us >= 2000 else ("us", 1.0)


def step_breakdown(categories: pd.DataFrame, steps: pd.DataFrame, path=None, *, title: str | None = None,
                   device_name: str | None = None) -> Figure:
    """One horizontal bar per step: its ops' time stacked by category (largest first), a hatched
    segment for the gap when the whole step took longer than its parts, and a black mark at the
    measured whole step (inside the bar when the step took less than its parts)."""
    for name, df, cols in (("categories", categories, ("step", "category", "total_time_us")),
                           ("steps", steps, ("step", "time_us", "parts_us"))):
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"step_breakdown: {name} must be a DataFrame, got {type(df).__name__}")
        missing = [c for c in cols if c not in df]
        if missing:
            raise ValueError(f"step_breakdown: {name} lacks column(s) {', '.join(missing)}")
    if not len(steps) or not len(categories):
        raise NoData("step_breakdown: no steps to show")
    order = list(steps["step"])
    totals = categories.groupby("category", sort=False)["total_time_us"].sum().sort_values(ascending=False)
    cats = list(totals.index)
    colors = {c: _CATEGORY_COLORS[i % len(_CATEGORY_COLORS)] for i, c in enumerate(cats)}
    unit, scale = _unit(float(steps["time_us"].max()))
    fig = _figure(10.5, 1.6 + 0.62 * len(order), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    left = np.zeros(len(order))
    y = None
    for c in cats:
        vals = np.array([float(categories[(categories["step"] == s) & (categories["category"] == c)]
                               ["total_time_us"].sum()) for s in order]) / scale
        y = hbars(ax, vals, order if y is None else None, left=left, colors=colors[c], height=0.62,
                  edgecolor="white", label=c)
        left = left + vals
    whole = steps["time_us"].to_numpy(float) / scale
    gap = np.clip(whole - left, 0, None)
    ax.barh(y, gap, left=left, height=0.62, color="white", edgecolor="#555555", hatch="///", label="gap (step - parts)",
            gid=GAP_GID)
    ax.scatter(whole, y, marker="|", s=900, color="black", zorder=5, label="whole step (one graph)", gid=STEP_GID)
    for yi, w, p in zip(y, whole, left):
        d = 100.0 * (w - p) / w if w > 0 else np.nan
        ax.text(max(w, p) * 1.01, yi, f"{w:.4g} {unit} (gap {d:+.1f} %)", va="center", fontsize=8.5)
    ax.set_xlim(0, max(whole.max(), left.max()) * 1.3)
    ax.set_xlabel(f"time per step ({unit}): the ops timed on their own, stacked; the mark is the whole step")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16 - 0.2 / len(order)), fontsize=8, frameon=False,
              ncol=min(4, len(cats) + 2))
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    heading = title or "Where the step's time goes" + (f" on {device_name}" if device_name else "")
    ax.set_title(heading, fontsize=11, fontweight="bold", loc="left")
    _save(fig, path)
    return fig


def whatif_chart(whatif: pd.DataFrame, path=None, *, title: str | None = None,
                 device_name: str | None = None) -> Figure:
    """Per fusion: the measured speed-up on its ops and of the whole step (%), and the seeds'
    estimate where they gave one."""
    if not isinstance(whatif, pd.DataFrame):
        raise ValueError(f"whatif_chart: expected a DataFrame, got {type(whatif).__name__}")
    for c in ("fusion", "ops_speedup_pct", "overall_speedup_pct"):
        if c not in whatif:
            raise ValueError(f"whatif_chart: no column {c!r}")
    if not len(whatif):
        raise NoData("whatif_chart: no fusions to show")
    n = len(whatif)
    fig = _figure(10, 1.6 + 0.9 * n, layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(n)[::-1] * 1.0
    h = 0.26
    series = [("ops_speedup_pct", "measured, on its ops", "#4477aa", h),
              ("overall_speedup_pct", "measured, whole step", "#228833", 0.0)]
    if "seeds_estimate_pct" in whatif and whatif["seeds_estimate_pct"].notna().any():
        series.append(("seeds_estimate_pct", "seeds' estimate", "#ccbb44", -h))
    else:
        series = [(c, lbl, col, off - h / 2) for c, lbl, col, off in series]
    for col, label, color, off in series:
        vals = pd.to_numeric(whatif[col], errors="coerce").to_numpy(float)
        ax.barh(y + off, np.nan_to_num(vals), height=h * 0.95, color=color, label=label)
        for yi, v in zip(y + off, vals):
            if np.isfinite(v):
                ax.text(v + (0.5 if v >= 0 else -0.5), yi, f"{v:+.1f} %", va="center", fontsize=8,
                        ha="left" if v >= 0 else "right")
    ax.set_yticks(y)
    labels = [f"{f}\n{w}" if w else str(f) for f, w in zip(whatif["fusion"], whatif.get("what", [""] * n))]
    ax.set_yticklabels(labels, fontsize=8.5)
    ax.axvline(0, color="black", linewidth=0.8)
    allv = pd.concat([pd.to_numeric(whatif[c], errors="coerce") for c, _, _, _ in series]).dropna()
    lo, hi = (min(0.0, float(allv.min())), max(0.0, float(allv.max()))) if len(allv) else (0.0, 1.0)
    span = (hi - lo) or 1.0
    ax.set_xlim(lo - 0.2 * span * (lo < 0), hi + 0.2 * span)
    ax.set_xlabel("speed-up (%): time before / time after - 1")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.1 / n), fontsize=8, frameon=False, ncol=3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", alpha=0.3)
    heading = title or "What each fusion buys" + (f" on {device_name}" if device_name else "")
    ax.set_title(heading, fontsize=11, fontweight="bold", loc="left")
    _save(fig, path)
    return fig
