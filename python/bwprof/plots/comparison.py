"""FP32 against FP16: one panel of bars per operation and the table of averages and speed-ups."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import roofline as rl
from .figure import NoData, _device_name, _figure, _num, _rows, _save
from .style import _color, _fmt_rate, _wrap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_CONFIG_KEYS = ["family", "kernel", "variant", "label", "shape"]


def _config_names(cfg: pd.DataFrame) -> list[str]:
    """Readable, unique names for a panel's configurations: the label, plus the kernel when a
    family has several, plus the parameters that tell equal labels apart."""
    several_kernels = cfg["kernel"].nunique() > 1
    base = []
    for r in cfg.itertuples():
        lab = r.label if isinstance(r.label, str) and r.label else ""
        kern = str(r.kernel)
        if several_kernels or not lab:
            short = kern[len(str(r.family)) + 1:] if kern.startswith(f"{r.family}_") else kern
            lab = f"{short} {lab}".strip() if lab and cfg["label"].nunique() > 1 else short if lab else short
        base.append(lab)
    names = list(base)
    for name in set(base):
        idx = [i for i, b in enumerate(base) if b == name]
        if len(idx) < 2:
            continue
        params = [dict(kv.split("=", 1) for kv in str(cfg["shape"].iloc[i]).split(",") if "=" in kv) for i in idx]
        differ = [k for k in params[0] if len({p.get(k) for p in params}) > 1]
        for i, p in zip(idx, params):
            extra = ",".join(f"{k}={p.get(k)}" for k in differ[:2])
            if cfg["variant"].iloc[i] != cfg["variant"].iloc[idx[0]] or not extra:
                extra = (extra + " " if extra else "") + str(cfg["variant"].iloc[i])
            names[i] = f"{name} {extra}"
    return names


def _pairs(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per configuration: the metric and median time of FP32 and FP16 side by side."""
    d = df[df["dtype"].isin(["fp32", "fp16"])].copy()
    for k in _CONFIG_KEYS:
        if k not in d:
            d[k] = d["kernel"] if k == "family" else ""
        d[k] = d[k].fillna("").astype(str)
    d[metric] = _num(d, metric)
    d["time_median_us"] = _num(d, "time_median_us")
    d["above"] = rl._as_bool(d["above_peak"]).astype(float) if "above_peak" in d else 0.0
    d = d.groupby(_CONFIG_KEYS + ["dtype"], sort=False)[[metric, "time_median_us", "above"]].agg(
        {metric: "median", "time_median_us": "median", "above": "max"}).reset_index()
    # unstack, not pivot_table(dropna=False): that one crosses every level with every other
    wide = d.set_index(_CONFIG_KEYS + ["dtype"])[[metric, "time_median_us", "above"]].unstack("dtype")
    order = d[_CONFIG_KEYS].drop_duplicates()
    wide = wide.reindex(pd.MultiIndex.from_frame(order))
    out = order.reset_index(drop=True)
    for dt in ("fp32", "fp16"):
        for col, name in ((metric, "value"), ("time_median_us", "time_us"), ("above", "above_peak")):
            out[f"{dt}_{name}"] = wide[(col, dt)].to_numpy(float) if (col, dt) in wide.columns else np.nan
    out["speedup"] = out["fp32_time_us"] / out["fp16_time_us"]
    return out


def comparison_table(df: pd.DataFrame, metric: str = "bandwidth_gbs") -> pd.DataFrame:
    """Per operation (family): mean FP32 and FP16 ``metric``, and FP16's speed-up over FP32 (the
    geometric mean of FP32 time / FP16 time over its configurations), with an "all" row."""
    p = _pairs(_rows(df, "comparison_table"), metric)
    rows = []
    for fam, g in list(p.groupby("family", sort=False)) + [("all", p)]:
        s = g["speedup"].dropna()
        s = s[s > 0]
        rows.append({"operation": fam, "configs": int(len(g)), f"fp32_{metric}": g["fp32_value"].mean(),
                     f"fp16_{metric}": g["fp16_value"].mean(),
                     "fp16_speedup": float(np.exp(np.log(s).mean())) if len(s) else np.nan})
    return pd.DataFrame(rows)


_WIDE_PANEL_CONFIGS = 8  # more configurations than this: the panel takes a whole row


def fp32_vs_fp16(df: pd.DataFrame, path=None, *, metric: str = "bandwidth_gbs", device_name=None,
                 ncols: int = 3) -> Figure:
    """One panel per operation with FP32 and FP16 bars per configuration (GB/s), FP16's speed-up
    written over each pair, the measured peak as a line, and the table of averages beside them."""
    from matplotlib.patches import Patch

    rows = _rows(df, "fp32_vs_fp16")
    if "dtype" not in rows or not {"fp32", "fp16"} <= set(rows["dtype"]):
        raise NoData("fp32_vs_fp16: needs both fp32 and fp16 rows")
    unit = "GB/s" if metric == "bandwidth_gbs" else "GFLOP/s" if metric == "gflops" else metric
    peak_col = {"bandwidth_gbs": "peak_bandwidth_gbs", "gflops": "peak_gflops"}.get(metric)
    theo_col = {"bandwidth_gbs": "theoretical_bandwidth_gbs"}.get(metric)
    pairs = _pairs(rows, metric)
    fams = list(dict.fromkeys(pairs["family"]))
    n = len(fams)
    ncols = max(1, min(ncols, n + 1))
    # An operation with many configurations gets a whole row, so its labels stay readable.
    counts = pairs["family"].value_counts()
    spans = [ncols if counts[f] > _WIDE_PANEL_CONFIGS else 1 for f in fams]
    places, r, c = [], 0, 0
    for span in spans:
        if c + span > ncols:
            r, c = r + 1, 0
        places.append((r, c, span))
        c += span
        if c == ncols:
            r, c = r + 1, 0
    table_place = (r, c, ncols - c)  # the rest of the last row, or a row of its own
    nrows = r + 1
    fig = _figure(5.4 * ncols, 4.0 * nrows + 0.8, layout="constrained")
    gs = fig.add_gridspec(nrows, ncols)
    for fam, (pr, pc, span) in zip(fams, places):
        ax = fig.add_subplot(gs[pr, pc:pc + span])
        cfg = pairs[pairs["family"] == fam].reset_index(drop=True)
        x = np.arange(len(cfg))
        w = 0.38
        v32, v16 = cfg["fp32_value"].to_numpy(float), cfg["fp16_value"].to_numpy(float)
        ok32, ok16 = np.isfinite(v32), np.isfinite(v16)
        for dt, xs, vals, ok in (("fp32", x - w / 2, v32, ok32), ("fp16", x + w / 2, v16, ok16)):
            bars = ax.bar(xs[ok], vals[ok], w, color=_color(dt), label=dt.upper(), edgecolor="white", lw=0.5)
            for b, hot in zip(bars, cfg[f"{dt}_above_peak"].to_numpy(float)[ok] > 0):
                if hot:  # above the device's peak: the data stayed in cache
                    b.set_hatch("///")
                    b.set_edgecolor("black")
        top = np.nanmax(np.concatenate([v32, v16, [0.0]]))
        fam_rows = rows[rows.get("family", rows["kernel"]).astype(str) == fam]
        peak = rl._mode(fam_rows[peak_col]) if peak_col and peak_col in fam_rows else np.nan
        theo = rl._mode(fam_rows[theo_col]) if theo_col and theo_col in fam_rows else np.nan
        ymax = top * 1.22 if top > 0 else 1.0
        notes = []
        for val, style, what in ((peak, "-", "measured peak"), (theo, "--", "theoretical peak")):
            if not np.isfinite(val):
                continue
            if top >= 0.2 * val:  # on scale: draw it
                ax.axhline(val, color="0.25", ls=style, lw=1.2)
                ax.annotate(f"{what} {_fmt_rate(val, unit)}", (1.0, val), xycoords=("axes fraction", "data"),
                            xytext=(-2, 2), textcoords="offset points", ha="right", va="bottom", fontsize=7.5,
                            color="0.25", bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))
                ymax = max(ymax, val * 1.15)
            else:  # a line 5x above the bars would flatten them to nothing
                notes.append(f"{what} {_fmt_rate(val, unit)} (off scale)")
        ax.set_ylim(0, ymax)
        for xi, s, a, b in zip(x, cfg["speedup"], v32, v16):
            if np.isfinite(s) and s > 0:
                h = np.nanmax([a, b])
                ax.text(xi, h + 0.015 * ymax, f"\u00d7{s:.2f}", ha="center", va="bottom", fontsize=8,
                        fontweight="bold", color="#1a7f37" if s >= 1.05 else "#b42318" if s <= 0.95 else "0.3")
        ax.set_xticks(x)
        names = _config_names(cfg)
        long = max((len(s) for s in names), default=0) > 12 or len(names) > 4
        many = len(names) > _WIDE_PANEL_CONFIGS
        ax.set_xticklabels([_wrap(s, 22 if many else 14) for s in names], fontsize=7 if many else 8,
                           rotation=40 if many else 25 if long else 0,
                           ha="right" if long else "center", rotation_mode="anchor")
        ax.set_ylabel(f"{'bandwidth' if unit == 'GB/s' else metric} ({unit})")
        ax.set_title(fam, fontsize=11, fontweight="bold")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
        if notes:
            ax.text(0.99, 0.98, "\n".join(notes), transform=ax.transAxes, ha="right", va="top", fontsize=7.5,
                    color="0.3")
    # The summary table beside the panels.
    tab = comparison_table(rows, metric)
    r, c0, _ = table_place
    tax = fig.add_subplot(gs[r, c0:])
    tax.axis("off")
    def cell(v):
        return _fmt_rate(v, unit) if unit in ("GB/s", "GFLOP/s") else f"{v:.3g}"

    cells = [[str(t.operation), f"{t.configs}", cell(t[2]), cell(t[3]),
              f"\u00d7{t.fp16_speedup:.2f}" if np.isfinite(t.fp16_speedup) else "-"]
             for t in tab.itertuples(index=False)]
    table = tax.table(cellText=cells, colLabels=["operation", "configs", "FP32 mean", "FP16 mean", "speed-up"],
                      loc="upper center", cellLoc="center", colLoc="center",
                      colWidths=[0.22, 0.14, 0.22, 0.22, 0.2])  # wide enough for the bold headers
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1.0, 1.35)
    for (ri, ci), cell in table.get_celld().items():
        cell.set_edgecolor("0.8")
        if ri == 0:
            cell.set_facecolor("#eef2f7")
            cell.set_text_props(fontweight="bold")
        elif ri == len(cells):
            cell.set_text_props(fontweight="bold")
    tax.set_title(f"averages ({unit}) and FP16 speed-up", fontsize=10)
    fig.suptitle(f"FP32 vs FP16 {'bandwidth' if unit == 'GB/s' else metric} on {_device_name(rows, device_name)}",
                 fontsize=14, fontweight="bold")
    tax.text(0.5, 0.0, _wrap("bars: achieved " + unit + " per configuration (median time). \u00d7N over a pair: "
                             "FP16 speed-up = FP32 time / FP16 time (green faster, red slower; geometric "
                             "mean in the table). Solid line: measured peak; dashed: theoretical. Hatched: above "
                             "the device's peak (the data stayed in cache).", 95),
             transform=tax.transAxes, ha="center", va="bottom", fontsize=8.5, color="0.3")
    fig.legend(handles=[Patch(color=_color("fp32"), label="FP32"), Patch(color=_color("fp16"), label="FP16")],
               loc="outside upper right", ncols=2, frameon=False, fontsize=10)
    _save(fig, path)
    return fig
