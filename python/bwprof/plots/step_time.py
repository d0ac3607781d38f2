"""A step's time as busy and idle by cause: one bar for the plain step (the device busy, then its
idle time before the first launch, in gaps between launches, after the host's waits on the device,
after the last launch: the profiled run's split scaled to the plain step's idle time), one for the
step as profiled (its own split, longer: the profiler slows the host), and the step as a CUDA graph
replay where it was captured."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .figure import NoData, _figure, _save
from .style import _CATEGORY_COLORS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PARTS = [("busy_us", "busy (kernels, copies, memsets)", _CATEGORY_COLORS[2]),
         ("idle_before_first_us", "idle before the first launch", _CATEGORY_COLORS[6]),
         ("idle_launch_gaps_us", "idle in gaps between launches", _CATEGORY_COLORS[3]),
         ("idle_host_wait_us", "idle after the host waited on the device", _CATEGORY_COLORS[1]),
         ("idle_after_last_us", "idle after the last launch", _CATEGORY_COLORS[9])]
WALL_GID = "bwprof-step-wall"


def step_time(report, path=None, *, title: str | None = None) -> Figure:
    """Where the step's time goes (see the module's doc); ``report`` is a StepReport."""
    s = report.summary
    vals = [float(s.get(k, math.nan)) for k, _, _ in PARTS]
    if not all(math.isfinite(v) for v in vals) or sum(vals) <= 0:
        raise NoData("step_time: the summary holds no time split")
    prof = [float(s.get(k if k == "busy_us" else "profiled_" + k, math.nan)) for k, _, _ in PARTS]
    profiled = all(math.isfinite(v) for v in prof) and abs(sum(prof) - sum(vals)) > 1e-6 * sum(vals)
    total = sum(vals)
    ms = max(total, sum(prof) if profiled else 0.0) >= 2000
    scale, unit = (1e3, "ms") if ms else (1.0, "us")
    graph = float(s.get("graph_us", math.nan))
    bars = [("the step (idle split scaled from the profiled run)" if profiled else "the step", vals)]
    if profiled:
        bars.append(("under the profiler", prof))
    names = [b[0] for b in bars] + (["CUDA graph replay"] if math.isfinite(graph) else [])
    fig = _figure(10.5, 2.2 + 0.7 * len(names), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(names))[::-1].astype(float)
    for b, (_, parts) in enumerate(bars):
        left, whole = 0.0, sum(parts)
        for (key, label, color), v in zip(PARTS, parts):
            ax.barh(y[b], v / scale, left=left / scale, height=0.6, color=color, edgecolor="white",
                    label=f"{label}: {v / scale:.3g} {unit} ({100 * v / whole:.1f} %)" if b == 0 else None)
            left += v
    if math.isfinite(graph):
        ax.barh(y[len(bars)], graph / scale, height=0.6, color=_CATEGORY_COLORS[4], edgecolor="white",
                label=f"the step as one graph: {graph / scale:.3g} {unit} (measured)")
    wall = float(s.get("wall_us", math.nan))
    if math.isfinite(wall):
        ax.scatter([wall / scale], [y[0]], marker="|", s=900, color="black", zorder=5, gid=WALL_GID,
                   label=f"the step without the profiler: {wall / scale:.3g} {unit}")
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_xlabel(f"time per step ({unit})")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=8, frameon=False, ncol=2)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or f"{report.name}: {s.get('verdict', '')}, the device busy {s.get('busy_pct', math.nan):.1f} % "
                 f"of the step", fontsize=11, fontweight="bold", loc="left")
    _save(fig, path)
    return fig
