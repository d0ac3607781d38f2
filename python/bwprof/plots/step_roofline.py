"""A step's kernels on the measured roofline: the roofs bwprof measured for the rows' dtypes (the
ones each row was judged against), every row with FLOPs as a point whose area is its share of the
step's time, coloured by its bound and labelled by its op; the rows without FLOPs listed beneath
with their share."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl
from .figure import NoData, _figure, _num, _save
from .labels import place_labels
from .style import POINTS_GID, ROOF_GID, _CATEGORY_COLORS, _color, _fmt_rate, _wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

BOUND_COLORS = {"memory": _CATEGORY_COLORS[0], "compute": _CATEGORY_COLORS[1], "latency": _CATEGORY_COLORS[3],
                "unknown": _CATEGORY_COLORS[6]}


def _ceilings(k: pd.DataFrame) -> pd.DataFrame:
    """The roofs the rows carry (each row's record of what it was judged against), per dtype."""
    per = {}
    for dt, g in k.groupby(k["dtype"].astype(str)):
        src = g["peak_compute_source"].astype(str)
        matrix = src.str.contains("matrix")

        def best(col, rows):
            v = pd.to_numeric(rows[col], errors="coerce").dropna()
            return float(v.max()) if len(v) else 0.0
        per[dt] = {"bandwidth_gbs": best("peak_bandwidth_gbs", g), "gflops": best("peak_gflops", g[~matrix]),
                   "matrix_gflops": best("peak_gflops", g[matrix]), "l2_gbs": best("peak_l2_gbs", g),
                   "l1_gbs": best("peak_l1_gbs", g), "bandwidth_source": "measured", "compute_source": "measured",
                   "matrix_source": "measured"}
    return rl.ceilings(per, matrix=True)


def _label(r) -> str:
    op = str(r.get("op") or "")
    op = op.split("::", 1)[-1] if op else str(r.get("kernel"))
    if op == "bwprof.region":
        op = str(r.get("region") or r.get("kernel"))
    mod = str(r.get("module") or "").split(".")
    tail = ".".join(mod[-2:]) if len(mod) > 1 else ""
    return f"{op} {tail}".strip() + f" {float(r['step_share_pct']):.0f}%"


def step_roofline(report, path=None, *, title: str | None = None) -> Figure:
    """The step's kernel rows on the roofline (see the module's doc); ``report`` is a StepReport."""
    k = report.kernels
    if not isinstance(k, pd.DataFrame) or not len(k):
        raise NoData("step_roofline: the report has no kernel rows")
    inten, gfl = _num(k, "intensity_flop_per_byte"), _num(k, "gflops")
    on = (inten > 0) & (gfl > 0) & np.isfinite(inten) & np.isfinite(gfl)
    ceil = _ceilings(k)
    roofs = [(dt, kind, float(ceil[(ceil.dtype == dt) & (ceil.kind == "memory")]["value"].max()), float(v))
             for dt, kind, v in ceil[ceil.kind.isin(["vector", "matrix"])][["dtype", "kind", "value"]].itertuples(
                 index=False)]
    xs = list(inten[on]) + [fl / bw for _, _, bw, fl in roofs if bw > 0]
    ys = list(gfl[on]) + [fl for *_, fl in roofs]
    if not xs:
        raise NoData("step_roofline: no row with FLOPs and no roofs to draw")
    x_lo, x_hi = min(xs) / 6, max(xs) * 8
    if x_hi / x_lo < 1e3:
        mid = math.sqrt(x_lo * x_hi)
        x_lo, x_hi = mid / 10 ** 1.5, mid * 10 ** 1.5
    y_lo, y_hi = min(ys) / 4, max(ys) * 3
    fig = _figure(12.5, 7.8)
    fig.subplots_adjust(left=0.08, right=0.78, top=0.92, bottom=0.2)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    grid = np.geomspace(x_lo, x_hi, 300)
    paths = []
    for dt, kind, bw, fl in roofs:
        y = rl.attainable(grid, bw, fl)
        ax.plot(grid, y, color=_color(dt), lw=2.6 if kind == "vector" else 2.0, ls="-" if kind == "vector" else "--",
                gid=ROOF_GID, label=f"{dt} {kind} roof (measured):\n{_fmt_rate(bw, 'GB/s')}, {_fmt_rate(fl, 'GFLOP/s')}")
        paths.append(np.column_stack([grid, y]))
    pts = k[on]
    share = _num(pts, "step_share_pct").fillna(0).clip(lower=0)
    sizes = 30 + 2400 * share / max(float(share.max()), 1e-9) * (share.max() / 100.0) ** 0.5
    colors = [BOUND_COLORS.get(str(b), _CATEGORY_COLORS[5]) for b in pts["bound"].astype(str)]
    ax.scatter(_num(pts, "intensity_flop_per_byte"), _num(pts, "gflops"), s=sizes, c=colors, alpha=0.75,
               edgecolors="black", linewidths=0.6, zorder=5, gid=POINTS_GID)
    for b, c in BOUND_COLORS.items():
        if (pts["bound"].astype(str) == b).any():
            ax.scatter([], [], s=60, c=c, edgecolors="black", label=f"{b}-bound rows")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)", fontsize=11)
    ax.set_ylabel("performance (GFLOP/s)", fontsize=11)
    ax.grid(True, which="major", alpha=0.35)
    s = report.summary
    ax.set_title(title or f"{report.name}: kernels on the measured roofline ({s.get('device_name', '')})\n"
                 f"point area = share of the {float(s.get('wall_us', math.nan)) / 1e3:.3g} ms step", fontsize=12,
                 fontweight="bold", loc="left")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if len(pts):
        place_labels(ax, _num(pts, "intensity_flop_per_byte").to_numpy(), _num(pts, "gflops").to_numpy(),
                     [_label(r) for r in pts.to_dict("records")], fontsize=7, line_paths=paths)
    off = k[~on]
    if len(off):
        listed = ", ".join(f"{_label(r)}" for r in off.head(14).to_dict("records"))
        more = f" and {len(off) - 14} more" if len(off) > 14 else ""
        fig.text(0.08, 0.02, _wrap(f"No FLOP count (not on the chart; judged by bandwidth), with their share of the "
                                   f"step: {listed}{more}", 170), fontsize=8, color="0.3", va="bottom")
    _save(fig, path)
    return fig
