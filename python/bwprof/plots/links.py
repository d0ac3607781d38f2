"""Charts of what crosses links: the peer-to-peer matrix as a heatmap, the bus bandwidth of each
collective against its size, host transfers against their size (pinned vs pageable), and one
kernel's bandwidth on each GPU of a multi-GPU run."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .figure import NoData, _device_name, _figure, _save
from .style import _color

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _frame(df, who: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{who}: expected a pandas DataFrame, got {type(df).__name__}")
    return df


def _num(s) -> pd.Series:
    return pd.to_numeric(s, errors="coerce")


def _size_text(b: float) -> str:
    for unit, f in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if b >= f:
            return f"{b / f:g} {unit}"
    return f"{b:g} B"


def p2p_heatmap(df: pd.DataFrame, path=None, direction: str = "uni", device_name=None) -> Figure:
    """The source x destination matrix of peer copy bandwidth (rows of ``bwprof.links.p2p()``),
    each cell with its GB/s and the link it crossed."""
    from ..links import p2p_matrix
    df = _frame(df, "p2p_heatmap")
    if not {"src", "dst", "direction"} <= set(df.columns) or not (df["direction"] == direction).any():
        raise NoData(f"p2p_heatmap: no {direction}directional peer copy rows")
    m = p2p_matrix(df, "bandwidth_gbs", direction)
    links = p2p_matrix(df, "link", direction) if "link" in df else None
    n = len(m)
    fig = _figure(max(5.0, 1.3 * n + 2.5), max(4.2, 1.1 * n + 1.8), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    vals = m.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(vals), cmap="viridis", vmin=0)
    fig.colorbar(im, ax=ax, label="GB/s")
    top = np.nanmax(vals) if np.isfinite(vals).any() else 1.0
    for i in range(n):
        for j in range(n):
            if i == j or not math.isfinite(vals[i, j]):
                ax.text(j, i, "-", ha="center", va="center", color="gray")
                continue
            label = f"{vals[i, j]:.0f}"
            if links is not None and isinstance(links.iat[i, j], str):
                label += "\n" + links.iat[i, j].replace(" (both ways)", "")
            ax.text(j, i, label, ha="center", va="center", fontsize=8,
                    color="white" if vals[i, j] < 0.6 * top else "black")
    ax.set_xticks(range(n), m.columns)
    ax.set_yticks(range(n), m.index)
    ax.set_xlabel("destination")
    ax.set_ylabel("source")
    what = "one way" if direction == "uni" else "both ways at once"
    ax.set_title(f"Peer-to-peer copy bandwidth, {what}, on {_device_name(df, device_name)}")
    _save(fig, path)
    return fig


def collective_busbw(df: pd.DataFrame, path=None, device_name=None) -> Figure:
    """Bus bandwidth (nccl-tests' definition) against size, one panel per collective, one line per dtype."""
    df = _frame(df, "collective_busbw")
    if "family" not in df or not (df["family"] == "collective").any():
        raise NoData("collective_busbw: no collective rows")
    rows = df[df["family"] == "collective"].copy()
    if "size_bytes" not in rows:
        rows["size_bytes"] = rows["shape"].astype(str).str.extract(r"bytes=(\d+)")[0]
    rows["size_bytes"] = _num(rows["size_bytes"])
    rows["bw"] = _num(rows["busbw_gbs"] if "busbw_gbs" in rows else rows["bandwidth_gbs"])
    kinds = list(dict.fromkeys(rows["kernel"]))
    cols = min(3, len(kinds))
    nrows = math.ceil(len(kinds) / cols)
    fig = _figure(4.6 * cols + 0.6, 3.6 * nrows + 0.6, layout="constrained")
    top = float(rows["bw"].max()) if rows["bw"].notna().any() else 1.0
    for i, k in enumerate(kinds):
        ax = fig.add_subplot(nrows, cols, i + 1)
        sub = rows[rows["kernel"] == k]
        for dt, g in sub.groupby("dtype", sort=False):
            g = g.sort_values("size_bytes")
            ax.plot(g["size_bytes"], g["bw"], marker="o", ms=3, color=_color(str(dt)), label=str(dt))
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, top * 1.1)
        ax.set_title(k)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ranks = ""
    if "ranks" in rows and rows["ranks"].notna().any():
        ranks = f" over {int(_num(rows['ranks']).max())} ranks"
    fig.suptitle(f"Collectives' bus bandwidth{ranks} on {_device_name(rows, device_name)}")
    _save(fig, path)
    return fig


def transfer_sizes(df: pd.DataFrame, path=None, device_name=None) -> Figure:
    """Host transfers' bandwidth against their size: h2d and d2h, pinned and pageable, with the
    host link's theoretical bandwidth."""
    df = _frame(df, "transfer_sizes")
    if "family" not in df or not (df["family"] == "transfer").any():
        raise NoData("transfer_sizes: no transfer rows")
    rows = df[df["family"] == "transfer"].copy()
    rows["size"] = _num(rows["shape"].astype(str).str.extract(r"bytes=(\d+)")[0])
    rows["bw"] = _num(rows["bandwidth_gbs"])
    fig = _figure(8.5, 5.0, layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    styles = {"pinned": "-", "pageable": "--", "runtime": ":"}
    for (k, v), g in rows.groupby(["kernel", "variant"], sort=False):
        g = g.groupby("size", as_index=False)["bw"].median().sort_values("size")
        ax.plot(g["size"], g["bw"], styles.get(str(v), "-"), marker="o", ms=3, label=f"{k} {v}")
    host = rows[rows["kernel"].isin(["h2d", "d2h"])]
    if len(host) and "theoretical_bandwidth_gbs" in host:
        link_bw = _num(host["theoretical_bandwidth_gbs"]).max()
        if math.isfinite(link_bw) and link_bw > 0:
            name = str(host["link"].dropna().iloc[0]) if "link" in host and host["link"].notna().any() else "host link"
            ax.axhline(link_bw, color="gray", lw=1)
            ax.text(rows["size"].min(), link_bw, f" {name}: {link_bw:.0f} GB/s each way", va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per copy")
    ax.set_ylabel("GB/s")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Transfers against size on {_device_name(rows, device_name)}")
    _save(fig, path)
    return fig


def device_comparison(df: pd.DataFrame, path=None, value: str = "bandwidth_gbs") -> Figure:
    """Each kernel's ``value`` (median over its rows) on each device of a run that measured several."""
    df = _frame(df, "device_comparison")
    if "device" not in df or df["device"].nunique() < 2:
        raise NoData("device_comparison: fewer than two devices")
    missing = [c for c in (value, "kernel", "dtype") if c not in df]
    if missing:
        raise NoData(f"device_comparison: no {', '.join(missing)} column")
    rows = df.assign(v=_num(df[value]))
    if rows["v"].isna().all():
        raise NoData(f"device_comparison: no {value} values")
    key = rows["kernel"].astype(str) + " " + rows["dtype"].astype(str)
    table = rows.assign(key=key).groupby(["key", "device"], sort=False)["v"].median().unstack("device")
    devs = list(table.columns)
    fig = _figure(min(16.0, 0.5 * len(table) * len(devs) + 4), 5.4, layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(table))
    w = 0.8 / len(devs)
    for j, d in enumerate(devs):
        ax.bar(x - 0.4 + w / 2 + j * w, table[d].fillna(0).to_numpy(), w * 0.92, label=str(d))
    ax.set_xticks(x, table.index, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(value.replace("_gbs", " (GB/s)"))
    ax.legend(fontsize=8)
    ax.set_title(f"{value} per kernel on each device")
    _save(fig, path)
    return fig


__all__ = ["collective_busbw", "device_comparison", "p2p_heatmap", "transfer_sizes"]
