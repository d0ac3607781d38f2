"""The size-aware memory ceiling: bandwidth against bytes moved (log axes), the curve bwprof's
clean read and copy measured on the device, one fitted line t(B) = t0 + B / BW per access pattern,
and every kernel of a run as a point, so that a small kernel is read against what any kernel of its
size (and of its mix of reads and writes) can reach."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl
from .figure import NoData, _device_name, _figure, _num, _rows, _save
from .style import _color, _fmt_rate, _marker

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CURVE_GID = "bwprof-size-curve"     # the measured points of the ceiling kernels
FIT_GID = "bwprof-size-fit"         # a fitted line (one per access pattern)
SIZE_POINTS_GID = "bwprof-size-kernels"  # the run's kernels
_PATTERN_COLORS = {"read": "#c00000", "copy": "#1f5fa8"}


def _lines_of(curve, df) -> list[dict]:
    """The lines to draw: a size_curve dict's ``lines`` (each pattern's t0_us, bandwidth_gbs,
    residual_pct, max_error_pct), else its top-level fit (an older curve), else the fit most rows
    carry (a saved run without its curve). Only finite lines with a positive bandwidth."""
    out = []
    if curve:
        for ln in curve.get("lines") or []:
            if isinstance(ln, dict):
                out.append({"pattern": str(ln.get("pattern") or ""), "t0_us": rl._num(ln.get("t0_us")),
                            "bandwidth_gbs": rl._num(ln.get("bandwidth_gbs")),
                            "residual_pct": rl._num(ln.get("residual_pct")),
                            "max_error_pct": rl._num(ln.get("max_error_pct"))})
        if not out:
            out.append({"pattern": "", "t0_us": rl._num(curve.get("t0_us")),
                        "bandwidth_gbs": rl._num(curve.get("bandwidth_gbs")),
                        "residual_pct": rl._num(curve.get("residual_pct")), "max_error_pct": math.nan})
    elif df is not None and "size_bandwidth_gbs" in df and "size_fixed_cost_us" in df and len(df):
        t0 = pd.to_numeric(df["size_fixed_cost_us"], errors="coerce").dropna()
        t0 = t0[t0 >= 0]  # a fixed cost of 0 is a fit, not a missing one
        out.append({"pattern": "", "t0_us": t0.mode().iloc[0] if len(t0) else math.nan,
                    "bandwidth_gbs": rl._mode(df["size_bandwidth_gbs"]), "residual_pct": math.nan,
                    "max_error_pct": math.nan})
    return [ln for ln in out if np.isfinite(ln["t0_us"]) and np.isfinite(ln["bandwidth_gbs"])
            and ln["bandwidth_gbs"] > 0]


def size_ceiling(df: pd.DataFrame | None = None, curve: dict | None = None, path=None,
                 device_name=None) -> Figure:
    """Bandwidth against bytes moved: the size curve (``curve``: ``bwprof.peaks()["size_curve"]``,
    its points and one fitted line per access pattern, read and copy; without it, the line most
    rows of ``df`` carry), and each row of ``df`` as a point (filled: single timing; open: graph
    timing). A row is judged against the line of its own pattern (a GEMV the read's, a copy the
    copy's). NoData when there is no line to draw."""
    if curve is not None and not isinstance(curve, dict):
        raise ValueError(f"size_ceiling: curve: expected a dict (bwprof.peaks()['size_curve']), got "
                         f"{type(curve).__name__}")
    rows = _rows(df, "size_ceiling") if df is not None else None
    lines = _lines_of(curve, rows)
    if not lines:
        raise NoData("size_ceiling: no size curve (a run from before the size-aware ceiling, or a device "
                     "without one)")
    fig = _figure(10.0, 6.2, layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    xs = []
    pts = pd.DataFrame((curve or {}).get("points") or [])
    if len(pts):
        wf = pd.to_numeric(pts["write_fraction"], errors="coerce") if "write_fraction" in pts else None
        for i, (kernel, g) in enumerate(pts.groupby("kernel", sort=False)):
            b = g["bytes"].astype(float).to_numpy()
            y = b / g["time_us"].astype(float).to_numpy() / 1e3
            w = float(wf[g.index].median()) if wf is not None else math.nan
            pattern = "read" if abs(w) < 0.01 else "copy" if abs(w - 0.5) < 0.01 else ""
            ax.plot(b, y, ls="none", marker="o^sD"[i % 4], ms=5, mfc="none",
                    mec=_PATTERN_COLORS.get(pattern, "0.35"), mew=1.0,
                    label=f"{kernel} (measured, cold)", gid=CURVE_GID, zorder=3)
            xs += list(b)
    if rows is not None and len(rows):
        nbytes = _num(rows, "bytes_read").fillna(0) + _num(rows, "bytes_written").fillna(0)
        gbs = _num(rows, "bandwidth_gbs")
        ok = (nbytes > 0) & (gbs > 0)
        r = rows[ok].assign(_b=nbytes[ok], _g=gbs[ok])
        fam = r["family"].astype(str) if "family" in r else pd.Series("", index=r.index)
        dt = r["dtype"].astype(str) if "dtype" in r else pd.Series("", index=r.index)
        graph = (r["timing"].astype(str) == "graph") if "timing" in r else pd.Series(False, index=r.index)
        for (f, d, g), grp in r.groupby([fam, dt, graph], sort=False):
            c = _color(d) if d else "#4477aa"
            ax.scatter(grp["_b"], grp["_g"], marker=_marker(f), s=46, c="none" if g else c, edgecolors=c,
                       linewidths=1.3, zorder=4, gid=SIZE_POINTS_GID,
                       label=f"{f} {d}" + (" (graph)" if g else ""))
        xs += list(r["_b"])
    bw_max = max(ln["bandwidth_gbs"] for ln in lines)
    lo = min([4096.0] + xs) / 2
    hi = max([4e9 if bw_max > 1000 else 4e8] + xs) * 2
    x = np.logspace(math.log10(lo), math.log10(hi), 200)
    for i, ln in enumerate(lines):
        t0, bw = ln["t0_us"], ln["bandwidth_gbs"]
        color = _PATTERN_COLORS.get(ln["pattern"], "#c00000" if len(lines) == 1 else "0.3")
        err = ""
        if np.isfinite(ln["residual_pct"]):
            err = f" (RMS {ln['residual_pct']:.1f} %" + (f", worst {ln['max_error_pct']:.1f} %"
                                                          if np.isfinite(ln["max_error_pct"]) else "") + ")"
        ax.plot(x, x / (t0 + x / (bw * 1e3)) / 1e3, color=color, lw=2.0, gid=FIT_GID, zorder=2,
                ls="-" if i == 0 else "--",
                label=f"{ln['pattern'] + ' ' if ln['pattern'] else ''}fit: {t0:.3g} us + B / "
                      f"{_fmt_rate(bw, 'GB/s')}{err}")
        ax.axhline(bw, color=color, ls=":", lw=1.0, zorder=1)
    t0, bw = lines[0]["t0_us"], lines[0]["bandwidth_gbs"]
    half = t0 * bw * 1e3  # the bytes at which the fixed cost is half the time (the first line's)
    if lo < half < hi:
        ax.axvline(half, color="0.6", ls="--", lw=1.0, zorder=1)
        ax.text(half, bw * 0.6, f" half of the time is\n the fixed cost at {half / 1e6:.3g} MB"
                + (f" ({lines[0]['pattern']})" if lines[0]["pattern"] else ""), fontsize=8, color="0.35", va="top")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("bytes moved per launch (read + written)")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=8, loc="lower right", frameon=False, ncols=2)
    name = _device_name(rows if rows is not None else None, device_name)
    ax.set_title(f"What a kernel moving B bytes can reach on {name}", fontsize=13, fontweight="bold", loc="left")
    _save(fig, path)
    return fig
