"""The comparison as a chart: each matched kernel's change in median time as a bar."""
from __future__ import annotations

import pandas as pd

from .files import PathLike

_VERDICT_COLOURS = {"slower": "#d62728", "faster": "#2ca02c", "undecided": "#ff7f0e", "unchanged": "#7f7f7f"}


def plot_changes(cmp: pd.DataFrame, path: PathLike | None = None):
    """Horizontal bars of each matched kernel's change in median time, coloured by verdict.

    The grey band around each bar is the change that row needed to count. Saves to ``path``
    (format from the suffix, e.g. .png or .svg) when given; returns the matplotlib Figure.
    """
    from matplotlib.patches import Patch

    from ..plots.bars import hbars
    from ..plots.figure import _figure

    rows = cmp[cmp["verdict"].isin(list(_VERDICT_COLOURS))].reset_index(drop=True)
    height = max(2.5, 0.35 * len(rows) + 1.5)
    fig = _figure(11, height)
    ax = fig.add_subplot(1, 1, 1)
    if rows.empty:
        ax.text(0.5, 0.5, "no kernels in both runs", ha="center", va="center",
                transform=ax.transAxes)
    else:
        thr = rows["threshold_pct"].to_numpy(dtype=float)
        change = rows["change_pct"].to_numpy(dtype=float)
        colours = [_VERDICT_COLOURS[v] for v in rows["verdict"]]
        label_cols = ["kernel", "variant", "dtype", "shape"]
        if "cache" in rows.columns and rows["cache"].nunique() > 1:
            label_cols.append("cache")
        labels = [" ".join(str(r[c]) for c in label_cols if str(r[c])) for _, r in rows.iterrows()]
        y = hbars(ax, 2 * thr, left=-thr, height=0.8, colors="#dddddd", zorder=1)
        hbars(ax, change, labels, height=0.5, colors=colours, label_size=8, zorder=2)
        # A zero-length bar is invisible; a dot shows where each change lies.
        ax.scatter(change, y, s=12, c=colours, zorder=3)
        ax.axvline(0.0, color="black", linewidth=0.8, zorder=3)
    ax.set_xlabel("change in median kernel time vs baseline (%)  (+ = slower)")
    devices = sorted(set(rows["device"])) if not rows.empty else []
    where = f" on {devices[0]}" if len(devices) == 1 else ""
    ax.set_title(f"Median kernel time vs baseline{where}")
    handles = [Patch(color=c, label=v) for v, c in _VERDICT_COLOURS.items()]
    handles.append(Patch(color="#dddddd", label="change needed to count (±threshold %)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
