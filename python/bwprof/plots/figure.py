"""Figures on an Agg canvas of their own, saved as PNG and SVG, and the rows and device name a
chart shows. matplotlib is imported when a figure is made, not when bwprof.plots is imported."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_DPI = 100          # layout and label placement work in these pixels; saving scales uniformly
_SAVE_DPI = 150


class NoData(ValueError):
    """The DataFrame holds nothing this chart can show (plot_all skips the chart)."""


def _figure(width: float, height: float, layout: str | None = None) -> Figure:
    # An Agg canvas of its own: no pyplot state, and the user's backend choice is left alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path) -> list[Path]:
    """Save ``fig`` as PNG and SVG beside each other (the suffix of ``path`` is ignored)."""
    if path is None:
        return []
    from ..arguments import path as _path
    from ..files import ensure_folder

    p = _path("path", path)
    stem = p.with_suffix("") if p.suffix.lower() in (".png", ".svg", ".pdf") else p
    ensure_folder("path", stem.parent)
    for ext in (".png", ".svg"):
        if (stem.parent / (stem.name + ext)).is_dir():
            raise ValueError(f"path: {stem.parent / (stem.name + ext)} is a folder; give a file name")
    out = []
    for ext in (".png", ".svg"):
        target = stem.parent / (stem.name + ext)
        fig.savefig(target, dpi=_SAVE_DPI, facecolor="white")
        out.append(target)
    fig._bwprof_paths = out  # for callers that want them (plot_all)
    return out


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


def _num(df: pd.DataFrame, col: str, default=np.nan) -> pd.Series:
    if col not in df:
        return pd.Series(default, index=df.index, dtype=float)
    return pd.to_numeric(df[col], errors="coerce")


def _rows(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{what}: expected a pandas DataFrame, got {type(df).__name__}")
    return rl.split_sweep(df)[0]
