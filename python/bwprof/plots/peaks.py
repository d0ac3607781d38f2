"""Peak memory bandwidth: the bandwidth of each stream kernel beside the measured and
theoretical peaks."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl
from .figure import NoData, _device_name, _figure, _num, _rows, _save
from .style import _color, _fmt_rate

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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
