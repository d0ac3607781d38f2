"""Where the time goes: horizontal bars (or a pie) of the time per category."""
from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .bars import hbars
from .figure import NoData, _device_name, _figure, _save
from .style import _CATEGORY_COLORS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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
        vals = secs.to_numpy() / uscale
        y = hbars(ax, vals, list(secs.index), colors=colors, height=0.7, label_size=9, edgecolor="white")
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
