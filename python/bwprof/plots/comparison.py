"""Dtypes against each other (FP32 vs FP16 vs BF16, or any set): one panel of bars per operation and
the table of averages and speed-ups."""
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


_DTYPE_ORDER = ("fp32", "fp16", "bf16")


def _dtypes_in(df: pd.DataFrame, dtypes, baseline, what: str) -> tuple[list[str], str]:
    """The dtypes to compare (the given ones, else those the rows have: fp32, fp16, bf16 first)
    and the baseline the speed-ups are taken against (the given one, else the first)."""
    have = [str(d) for d in pd.unique(df["dtype"].dropna().astype(str))] if "dtype" in df else []
    have = [d for d in have if d.strip() and d != "nan"]  # a foreign CSV's blanks are no dtype
    if dtypes is None:
        dtypes = [d for d in _DTYPE_ORDER if d in have] + sorted(d for d in have if d not in _DTYPE_ORDER)
    else:
        dtypes = [dtypes] if isinstance(dtypes, str) else list(dtypes)
        if not dtypes or not all(isinstance(d, str) and d for d in dtypes):
            raise ValueError(f"dtypes: expected dtype names such as ['fp32', 'fp16', 'bf16'], got {dtypes!r}")
        if len(set(dtypes)) != len(dtypes):
            raise ValueError(f"dtypes: each dtype once, got {dtypes!r}")
    if baseline is None:
        baseline = dtypes[0] if dtypes else None
    elif not isinstance(baseline, str) or baseline not in dtypes:
        raise ValueError(f"baseline: expected one of the compared dtypes {dtypes}, got {baseline!r}")
    missing = [d for d in dtypes if d not in have]
    if len(dtypes) < 2 or missing:
        raise NoData(f"{what}: needs rows of at least two dtypes" +
                     (f" (none of {', '.join(missing)})" if missing else ""))
    return dtypes, baseline


def _pairs(df: pd.DataFrame, metric: str, dtypes=("fp32", "fp16"), baseline="fp32") -> pd.DataFrame:
    """One row per configuration: the metric, median time and above-peak flag of each dtype side by
    side ({dtype}_value, {dtype}_time_us, {dtype}_above_peak), and each other dtype's speed-up over
    the baseline ({dtype}_speedup = baseline time / its time; ``speedup`` is the first of them)."""
    d = df[df["dtype"].isin(list(dtypes))].copy()
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
    for dt in dtypes:
        for col, name in ((metric, "value"), ("time_median_us", "time_us"), ("above", "above_peak")):
            out[f"{dt}_{name}"] = wide[(col, dt)].to_numpy(float) if (col, dt) in wide.columns else np.nan
    others = [dt for dt in dtypes if dt != baseline]
    for dt in others:
        out[f"{dt}_speedup"] = out[f"{baseline}_time_us"] / out[f"{dt}_time_us"]
    out["speedup"] = out[f"{others[0]}_speedup"] if others else np.nan
    return out


def comparison_table(df: pd.DataFrame, metric: str = "bandwidth_gbs", *, dtypes=None,
                     baseline: str | None = None) -> pd.DataFrame:
    """Per operation (family): the mean ``metric`` of each dtype ({dtype}_{metric}) and each other
    dtype's speed-up over the baseline ({dtype}_speedup: the geometric mean of baseline time / its
    time over the operation's configurations), with an "all" row. ``dtypes``: those the rows have
    (fp32, fp16, bf16 first) unless given; ``baseline``: the first of them unless given."""
    rows = _rows(df, "comparison_table")
    dtypes, baseline = _dtypes_in(rows, dtypes, baseline, "comparison_table")
    p = _pairs(rows, metric, dtypes, baseline)
    out = []
    for fam, g in list(p.groupby("family", sort=False)) + [("all", p)]:
        r = {"operation": fam, "configs": int(len(g))}
        for dt in dtypes:
            r[f"{dt}_{metric}"] = g[f"{dt}_value"].mean()
        for dt in dtypes:
            if dt == baseline:
                continue
            s = g[f"{dt}_speedup"].dropna()
            s = s[s > 0]
            r[f"{dt}_speedup"] = float(np.exp(np.log(s).mean())) if len(s) else np.nan
        out.append(r)
    return pd.DataFrame(out)


_WIDE_PANEL_CONFIGS = 8  # more configurations than this: the panel takes a whole row


def fp32_vs_fp16(df: pd.DataFrame, path=None, *, metric: str = "bandwidth_gbs", device_name=None,
                 ncols: int = 3) -> Figure:
    """FP32 against FP16: ``compare_dtypes`` with those two."""
    rows = _rows(df, "fp32_vs_fp16")
    if "dtype" not in rows or not {"fp32", "fp16"} <= set(rows["dtype"]):
        raise NoData("fp32_vs_fp16: needs both fp32 and fp16 rows")
    return compare_dtypes(rows, path, dtypes=("fp32", "fp16"), metric=metric, device_name=device_name, ncols=ncols)


def compare_dtypes(df: pd.DataFrame, path=None, *, dtypes=None, baseline: str | None = None,
                   metric: str = "bandwidth_gbs", device_name=None, ncols: int = 3) -> Figure:
    """One panel per operation with a bar per dtype and configuration (GB/s), each other dtype's
    speed-up over the baseline written over its bar, the measured peak as a line, and the table of
    averages beside them. ``dtypes``: any two or more (default: those the rows have, fp32, fp16 and
    bf16 first); ``baseline``: the dtype the speed-ups are taken against (default: the first)."""
    from matplotlib.patches import Patch

    rows = _rows(df, "compare_dtypes")
    dtypes, baseline = _dtypes_in(rows, dtypes, baseline, "compare_dtypes")
    others = [dt for dt in dtypes if dt != baseline]
    unit = "GB/s" if metric == "bandwidth_gbs" else "GFLOP/s" if metric == "gflops" else metric
    peak_col = {"bandwidth_gbs": "peak_bandwidth_gbs", "gflops": "peak_gflops"}.get(metric)
    theo_col = {"bandwidth_gbs": "theoretical_bandwidth_gbs"}.get(metric)
    pairs = _pairs(rows, metric, dtypes, baseline)
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
    k = len(dtypes)
    w = 0.76 / k
    for fam, (pr, pc, span) in zip(fams, places):
        ax = fig.add_subplot(gs[pr, pc:pc + span])
        cfg = pairs[pairs["family"] == fam].reset_index(drop=True)
        x = np.arange(len(cfg))
        vals = {dt: cfg[f"{dt}_value"].to_numpy(float) for dt in dtypes}
        offset = {dt: (i - (k - 1) / 2) * w for i, dt in enumerate(dtypes)}
        for dt in dtypes:
            ok = np.isfinite(vals[dt])
            bars = ax.bar((x + offset[dt])[ok], vals[dt][ok], w, color=_color(dt), label=dt.upper(),
                          edgecolor="white", lw=0.5)
            for b, hot in zip(bars, cfg[f"{dt}_above_peak"].to_numpy(float)[ok] > 0):
                if hot:  # above the device's peak: the data stayed in cache
                    b.set_hatch("///")
                    b.set_edgecolor("black")
        top = np.nanmax(np.concatenate([v for v in vals.values()] + [[0.0]]))
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
        # Two dtypes: the speed-up over the pair; more: over each other dtype's own bar.
        for dt in others:
            for xi, s, h in zip(x, cfg[f"{dt}_speedup"],
                                np.nanmax(np.vstack([vals[d] for d in dtypes]), axis=0) if k == 2 else vals[dt]):
                if np.isfinite(s) and s > 0 and np.isfinite(h):
                    ax.text(xi + (0.0 if k == 2 else offset[dt]), h + 0.015 * ymax, f"\u00d7{s:.2f}",
                            ha="center", va="bottom", fontsize=8 if k == 2 else 6.5, fontweight="bold",
                            rotation=0 if k == 2 else 90,
                            color="#1a7f37" if s >= 1.05 else "#b42318" if s <= 0.95 else "0.3")
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
    tab = comparison_table(rows, metric, dtypes=dtypes, baseline=baseline)
    r, c0, _ = table_place
    tax = fig.add_subplot(gs[r, c0:])
    tax.axis("off")

    def cell(v):
        return _fmt_rate(v, unit) if unit in ("GB/s", "GFLOP/s") else f"{v:.3g}"

    cells = []
    for t in tab.to_dict("records"):
        cells.append([str(t["operation"]), f"{t['configs']}"] + [cell(t[f"{dt}_{metric}"]) for dt in dtypes] +
                     [f"\u00d7{t[f'{dt}_speedup']:.2f}" if np.isfinite(t[f"{dt}_speedup"]) else "-"
                      for dt in others])
    labels = ["operation", "configs"] + [f"{dt.upper()} mean" for dt in dtypes] + \
        ([f"{dt.upper()} speed-up" for dt in others] if len(others) > 1 else ["speed-up"])
    widths = [0.22, 0.14] + [0.22] * k + [0.2] * len(others)
    scale = sum(widths)
    table = tax.table(cellText=cells, colLabels=labels, loc="upper center", cellLoc="center", colLoc="center",
                      colWidths=[wd / max(scale, 1.0) for wd in widths])  # wide enough for the bold headers
    table.auto_set_font_size(False)
    table.set_fontsize(9 if k == 2 else 8)
    table.scale(1.0, 1.35)
    for (ri, ci), cl in table.get_celld().items():
        cl.set_edgecolor("0.8")
        if ri == 0:
            cl.set_facecolor("#eef2f7")
            cl.set_text_props(fontweight="bold")
        elif ri == len(cells):
            cl.set_text_props(fontweight="bold")
    names = [dt.upper() for dt in dtypes]
    vs = " vs ".join(names)
    tax.set_title(f"averages ({unit}) and speed-up over {baseline.upper()}", fontsize=10)
    fig.suptitle(f"{vs} {'bandwidth' if unit == 'GB/s' else metric} on {_device_name(rows, device_name)}",
                 fontsize=14, fontweight="bold")
    tax.text(0.5, 0.0, _wrap("bars: achieved " + unit + " per configuration (median time). \u00d7N: speed-up "
                             f"over {baseline.upper()} = {baseline.upper()} time / this dtype's time (green "
                             "faster, red slower; geometric mean in the table). Solid line: measured peak; "
                             "dashed: theoretical. Hatched: above the device's peak (the data stayed in cache).",
                             95),
             transform=tax.transAxes, ha="center", va="bottom", fontsize=8.5, color="0.3")
    fig.legend(handles=[Patch(color=_color(dt), label=dt.upper()) for dt in dtypes],
               loc="outside upper right", ncols=k, frameon=False, fontsize=10)
    _save(fig, path)
    return fig
