"""Peer-to-peer copies between every pair of GPUs of the node, as rows and as a matrix.

``p2p(...)`` measures the ``p2p_copy`` kernel from every GPU to every other (one way, both ways, or
both), each row judged against the link between the two; ``p2p_matrix(df)`` pivots those rows into
a source x destination matrix; ``peer_links()`` is the link table the runtime and NVML report
(NVLink with its link count, xGMI, PCIe, or PCIe through host memory when the two GPUs cannot
reach each other directly). ``plots.p2p_heatmap`` draws the matrix.
"""
from __future__ import annotations

import sys

import pandas as pd

from . import _core
from . import arguments as _args
from .api import measure

DIRECTIONS = ("uni", "bi")


def peer_links() -> pd.DataFrame:
    """One row per ordered GPU pair: src, dst, link, link_kind, link_gbs (one direction), direct."""
    return pd.DataFrame(_core.peer_links(), columns=["src", "dst", "link", "link_kind", "link_gbs", "direct"])


def host_links() -> pd.DataFrame:
    """One row per GPU: its PCI bus id and the link to host memory (PCIe generation and width, or
    NVLink-C2C) with its one-direction bandwidth, where the machine reports them."""
    rows = [{"device": d["id"], "device_name": d["name"], "pci_bus_id": d.get("pci_bus_id", ""),
             "host_link": d.get("host_link", ""), "host_link_gbs": d.get("host_link_gbs", 0.0)}
            for d in _core.devices() if d["kind"] == "gpu"]
    return pd.DataFrame(rows, columns=["device", "device_name", "pci_bus_id", "host_link", "host_link_gbs"])


def _gpus() -> list[str]:
    return [d["id"] for d in _core.devices() if d["kind"] == "gpu"]


def p2p(bytes: int = 256 << 20, directions=DIRECTIONS, *, devices=None, warmup: int = 2, repeats: int = 10,
        verify: bool = True, progress: bool = False, on_row=None) -> pd.DataFrame:
    """Copy ``bytes`` from every GPU to every other GPU of ``devices`` (default: all), in each of
    ``directions`` ("uni": one way; "bi": both ways at once); one result row per pair and direction.
    ValueError when fewer than two GPUs are there."""
    size = _args.count("bytes", bytes, 1, 1 << 40)
    if isinstance(directions, str):
        directions = [directions]
    directions = _args.texts("directions", directions)
    for d in directions:
        if d not in DIRECTIONS:
            raise ValueError(f"directions: unknown direction {d!r} (known: uni, bi)")
    warmup = _args.count("warmup", warmup, 0, _args.MAX_WARMUP)
    repeats = _args.count("repeats", repeats, 1, _args.MAX_REPEATS)
    verify, progress = _args.flag("verify", verify), _args.flag("progress", progress)
    if on_row is not None and not callable(on_row):
        raise ValueError(f"on_row: expected a function of one row (a dict) or None, got {_args.show(on_row)}")
    gpus = _gpus() if devices is None else [_core.device_info(_args.text("devices", d))["id"]
                                            for d in _args.texts("devices", devices)]
    if any(not g.startswith("gpu:") for g in gpus):
        raise ValueError(f"devices: peer copies run between GPUs, got {', '.join(gpus)}")
    if len(gpus) < 2:
        raise ValueError(f"devices: a peer-to-peer matrix needs at least two GPUs; this process sees "
                         f"{len(gpus)} ({', '.join(gpus) or 'none'})")
    rows = []
    for d in directions:
        for src in gpus:
            for dst in gpus:
                if src == dst:
                    continue
                m = measure("p2p_copy", device=src, warmup=warmup, repeats=repeats, verify=verify, cache="hot",
                            peer=int(dst.split(":")[1]), bytes=size, direction=d)
                row = m.to_dict()
                row.update(src=src, dst=dst, direction=d)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
                if progress:
                    sys.stderr.write(f"p2p {src} -> {dst} {d}: {row['bandwidth_gbs']:.1f} GB/s ({row['link']})\n")
    return pd.DataFrame(rows, columns=list(_core.columns()) + ["src", "dst", "direction"])


def p2p_matrix(df: pd.DataFrame, value: str = "bandwidth_gbs", direction: str = "uni") -> pd.DataFrame:
    """The rows of :func:`p2p` as a source x destination matrix of ``value`` (NaN on the diagonal)."""
    df = _args.frame("df", df)
    direction = _args.text("direction", direction, DIRECTIONS)
    missing = [c for c in ("src", "dst", "direction", value) if c not in df.columns]
    if missing:
        raise ValueError(f"df: expected rows from bwprof.links.p2p(), missing column(s) {', '.join(missing)}")
    sub = df[df["direction"] == direction]
    gpus = sorted(set(sub["src"]) | set(sub["dst"]), key=lambda g: int(str(g).split(":")[-1]))
    m = sub.pivot_table(index="src", columns="dst", values=value, aggfunc="first")
    return m.reindex(index=gpus, columns=gpus)


__all__ = ["DIRECTIONS", "host_links", "p2p", "p2p_matrix", "peer_links"]
